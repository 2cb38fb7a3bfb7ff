import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite("Deadline schedule")
struct DeadlineScheduleTests {
    func id(_ raw: UInt64) -> RequestID { RequestID(rawValue: raw) }

    @Test func onlyRequestsStillRunningAtTheirDeadlineExpire() {
        var schedule = DeadlineSchedule()
        let start = ContinuousClock.now
        var live: [RequestID: ContinuousClock.Instant] = [
            id(1): start + .milliseconds(400), id(2): start + .milliseconds(50),
            id(3): start + .milliseconds(50),
        ]
        let first = schedule.add(id(1), deadline: start + .milliseconds(400))
        let sooner = schedule.add(id(2), deadline: start + .milliseconds(50))
        #expect(first?.generation == 1)
        #expect(
            sooner == .init(generation: 2, wake: start + .milliseconds(50) + DeadlineSchedule.slack),
            "a sooner deadline than the watcher sleeps for starts a new watcher"
        )
        #expect(schedule.add(id(3), deadline: start + .milliseconds(50)) == nil, "the new watcher wakes in time")
        live[id(3)] = nil  // finished in time

        let isLive = { (due: DeadlineSchedule.Due) in live[due.id].map(Tick.init) == due.tick }
        #expect(
            schedule.expire(generation: 1, now: start + .milliseconds(60), isLive: isLive).expired.isEmpty,
            "the replaced watcher gets nothing"
        )
        let woken = schedule.expire(generation: 2, now: start + .milliseconds(60), isLive: isLive)
        #expect(woken.expired == [id(2)])
        #expect(woken.next == start + .milliseconds(400) + DeadlineSchedule.slack)
        let last = schedule.expire(generation: 2, now: start + .milliseconds(410), isLive: isLive)
        #expect(last.expired == [id(1)])
        #expect(last.next == nil, "the watcher stops when no deadline is left")
        #expect(schedule.count == 0)
    }

    @Test func ticksKeepOrderAndSaturateFarAway() {
        let now = ContinuousClock.now
        #expect(Tick(now) < Tick(now + .nanoseconds(1)))
        #expect(Tick(now + .milliseconds(3)).instant == now + .milliseconds(3))
        let far = Tick(now + .seconds(Int64.max / 4))
        #expect(far == Tick(now + .seconds(Int64.max / 2)), "centuries away saturate to one far tick")
        #expect(
            far + Tick(DeadlineSchedule.slack) == far,
            "adding the slack to the farthest tick saturates, not overflows"
        )
        #expect(far + far == far && Tick(now + .seconds(1)) + far == far, "so does adding two far ticks")
        #expect(
            Tick.now + .seconds(Int64.max) > Tick.now + .seconds(3600),
            "a deadline given as a huge duration stays far away"
        )
    }

    @Test func finishedRequestsLeaveNothingBehind() {
        var state = PoolState(scheduling: SchedulingOptions())
        let later = Tick.now + .seconds(3600)
        let call = Call.forTesting()
        for _ in 1...10_000 {
            let (id, _) = state.register(call, deadline: later)
            _ = state.finish(id)
        }
        #expect(state.entries.isEmpty)
        #expect(state.deadlines.count < 200, "leftovers are dropped once they outnumber the requests in flight")
    }

    @Test func timersFireAtTheirDeadlineUnlessCancelled() async throws {
        let timers = DeadlineTimers()
        let fired = Locked<[String]>([])
        let now = ContinuousClock.now
        let late = timers.add(now + .milliseconds(60)) { fired.withLock { $0.append("late") } }
        let cancelled = timers.add(now + .milliseconds(20)) { fired.withLock { $0.append("cancelled") } }
        _ = timers.add(now + .milliseconds(40)) { fired.withLock { $0.append("early") } }
        timers.cancel(cancelled)
        #expect(late != cancelled)
        let deadline = ContinuousClock.now + .seconds(5)
        while fired.withLock({ $0.count }) < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(fired.withLock { $0 } == ["early", "late"])
    }
}
