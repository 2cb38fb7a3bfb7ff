import Testing

@testable import Courier

@Suite("Transport shutdown")
struct TransportShutdownTests {
    struct Refused: Error, Equatable { let index: Int }

    @Test func everyClientIsShutDownEvenAfterOneThrowsAndTheFirstErrorIsReported() async throws {
        let visited = Locked<[Int]>([])
        await #expect(throws: Refused(index: 1)) {
            try await AsyncHTTPClientTransport.shutDownEach([0, 1, 2, 3]) { index in
                visited.withLock { $0.append(index) }
                if index.isMultiple(of: 2) == false { throw Refused(index: index) }
            }
        }
        #expect(visited.withLock { $0 } == [0, 1, 2, 3], "the clients after the one that threw were left running")
    }
}
