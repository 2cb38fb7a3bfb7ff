import Testing

@testable import Courier

@Suite("Client table")
struct ClientTableTests {
    final class Client {
        let key: Int
        init(_ key: Int) { self.key = key }
    }

    @Test func eachKeyGetsOneClientWhateverItsPlaceInTheFront() {
        var table = ClientTable<Int, Client>(frontLimit: 2)
        var made = 0
        func client(_ key: Int) -> Client {
            table.client(for: key) {
                made += 1
                return Client(key)
            }
        }
        let first = client(1)
        #expect(client(1) === first)
        for key in 2...5 { _ = client(key) }  // 1 leaves the front
        #expect(client(1) === first, "a key out of the front is found in the table")
        #expect(made == 5)
        #expect(table.all.count == 5)
        table.removeAll()
        #expect(table.all.isEmpty)
        #expect(client(1) !== first, "after removeAll a key gets a new client")
    }
}
