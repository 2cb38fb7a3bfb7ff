import Testing

@testable import Courier

@Suite("Ordered relay")
struct OrderedRelayTests {
    actor Received {
        var values: [Int] = []
        func add(_ value: Int) { values.append(value) }
    }

    @Test func aBurstArrivesWholeAndInOrder() async {
        let relay = OrderedRelay<Int>()
        let received = Received()
        async let delivered: Void = relay.run { await received.add($0) }
        for value in 0..<5_000 { relay.yield(value) }  // from synchronous code, as a download's transfer reports
        relay.finish()
        await delivered
        #expect(await received.values == Array(0..<5_000))
    }
}
