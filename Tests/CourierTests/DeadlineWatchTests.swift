import Testing
@testable import Courier

@Suite("Deadline watch")
struct DeadlineWatchTests {
    /// The ids handed to `expire`, in order.
    final class Expired: Sendable {
        let ids = Locked<[RequestID]>([])
        var all: [RequestID] { ids.withLock { $0 } }
    }

    func id(_ raw: UInt64) -> RequestID { RequestID(rawValue: raw) }

    /// Polls `condition` every 10 ms for up to 5 s.
    func eventually(_ condition: () -> Bool) async throws -> Bool {
        let end = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < end {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    @Test func onlyRequestsStillRunningAtTheirDeadlineExpire() async throws {
        let expired = Expired()
        let watch = DeadlineWatch { ids in expired.ids.withLock { $0 += ids } }
        let start = ContinuousClock.now
        watch.watch(id(1), until: start + .milliseconds(400))
        watch.watch(id(2), until: start + .milliseconds(50))  // sooner than the watcher sleeps: a new one takes over
        watch.watch(id(3), until: start + .milliseconds(50))
        watch.forget(id(3))  // finished in time
        #expect(try await eventually { expired.all == [id(2)] })
        #expect(start.duration(to: .now) < .milliseconds(400), "the sooner deadline waited for the later one")
        #expect(try await eventually { expired.all == [id(2), id(1)] })
        #expect(start.duration(to: .now) >= .milliseconds(400))
        #expect(watch.count == 0)
    }

    @Test func finishedRequestsLeaveNothingBehind() async throws {
        let expired = Expired()
        let watch = DeadlineWatch { ids in expired.ids.withLock { $0 += ids } }
        let later = ContinuousClock.now + .seconds(3600)
        for raw in 1...10_000 {
            watch.watch(id(UInt64(raw)), until: later)
            watch.forget(id(UInt64(raw)))
        }
        #expect(watch.count == 0)
        #expect(watch.heldDeadlines < 200, "leftovers are dropped once they outnumber the live deadlines")
        watch.watch(id(20_000), until: .now + .milliseconds(20))
        #expect(try await eventually { expired.all == [id(20_000)] })
    }
}
