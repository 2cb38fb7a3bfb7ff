import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite("Request scheduler")
struct SchedulerTests {
    func id(_ n: UInt64) -> RequestID { RequestID(rawValue: n) }

    @Test func startsAtOnceUntilTheGlobalLimitThenWaits() {
        var scheduler = RequestScheduler(limits: .init(maxConcurrent: 2, maxPerHost: nil))
        #expect(scheduler.enqueue(id(1), host: "a", priority: .normal) == .start)
        #expect(scheduler.enqueue(id(2), host: "b", priority: .normal) == .start)
        #expect(scheduler.enqueue(id(3), host: "c", priority: .normal) == .wait)
        #expect(scheduler.runningCount == 2 && scheduler.waitingCount == 1)
        #expect(scheduler.finish(id(1)) == [id(3)])
        #expect(scheduler.isRunning(id(3)))
    }

    @Test func aHeldRequestWaitsWhateverTheRoomUntilReleased() {
        var scheduler = RequestScheduler(limits: .init(maxConcurrent: 1, maxPerHost: nil))
        #expect(scheduler.enqueue(id(1), host: "a", priority: .normal, held: true) == .wait, "held from the start")
        #expect(scheduler.enqueue(id(2), host: "a", priority: .normal) == .start, "it passes the held one")
        _ = scheduler.enqueue(id(3), host: "a", priority: .high)
        let heldThree = scheduler.hold(id(3))
        let heldTwo = scheduler.hold(id(2))
        #expect(heldThree && !heldTwo, "only waiting requests are held")
        let afterTwo = scheduler.finish(id(2))
        #expect(afterTwo == [], "both waiting requests are held")
        let releasedOne = scheduler.release(id(1))
        let releasedAgain = scheduler.release(id(1))
        #expect(releasedOne == [id(1)] && releasedAgain == [])
        let cancelled = scheduler.cancelWaiting(id(3))
        let releasedThree = scheduler.release(id(3))
        #expect(cancelled && releasedThree == [], "a cancelled request is not held")
        let afterOne = scheduler.finish(id(1))
        #expect(afterOne == [] && scheduler.waitingCount == 0)
    }

    @Test func higherPriorityFirstAndFIFOWithinAPriority() {
        var scheduler = RequestScheduler(limits: .init(maxConcurrent: 1, maxPerHost: nil))
        #expect(scheduler.enqueue(id(1), host: "a", priority: .normal) == .start)
        _ = scheduler.enqueue(id(2), host: "a", priority: .low)
        _ = scheduler.enqueue(id(3), host: "a", priority: .normal)
        _ = scheduler.enqueue(id(4), host: "a", priority: .high)
        _ = scheduler.enqueue(id(5), host: "a", priority: .normal)
        var order: [RequestID] = []
        var current = id(1)
        while true {
            let started = scheduler.finish(current)
            guard let next = started.first else { break }
            #expect(started.count == 1)
            order.append(next)
            current = next
        }
        #expect(order == [id(4), id(3), id(5), id(2)])
    }

    @Test func perHostLimitLetsOtherHostsOvertake() {
        var scheduler = RequestScheduler(limits: .init(maxConcurrent: 10, maxPerHost: 1))
        #expect(scheduler.enqueue(id(1), host: "a", priority: .normal) == .start)
        #expect(scheduler.enqueue(id(2), host: "a", priority: .high) == .wait)
        #expect(scheduler.enqueue(id(3), host: "b", priority: .low) == .start)  // b has room: no one waits for b
        #expect(scheduler.finish(id(3)) == [])
        #expect(scheduler.finish(id(1)) == [id(2)])
    }

    @Test func cancellingAWaitingRequestRemovesIt() {
        var scheduler = RequestScheduler(limits: .init(maxConcurrent: 1, maxPerHost: nil))
        _ = scheduler.enqueue(id(1), host: "a", priority: .normal)
        _ = scheduler.enqueue(id(2), host: "a", priority: .normal)
        _ = scheduler.enqueue(id(3), host: "a", priority: .normal)
        let first = scheduler.cancelWaiting(id(2))
        let again = scheduler.cancelWaiting(id(2))
        let running = scheduler.cancelWaiting(id(1))  // running, not waiting
        #expect(first && !again && !running)
        #expect(scheduler.finish(id(1)) == [id(3)])
    }

    @Test func thousandsOfCancelledWaitersLeaveNothingBehind() {
        var scheduler = RequestScheduler(limits: .init(maxConcurrent: 1, maxPerHost: nil))
        _ = scheduler.enqueue(id(1), host: "a", priority: .normal)
        scheduler.suspend()  // nothing drains: cancels pile up until the queues are compacted
        for n in UInt64(2)...5_001 { _ = scheduler.enqueue(id(n), host: "a", priority: .normal) }
        var cancelled = 0
        for n in UInt64(2)...5_000 where scheduler.cancelWaiting(id(n)) { cancelled += 1 }
        #expect(cancelled == 4_999)
        #expect(scheduler.waitingCount == 1)
        #expect(scheduler.resume() == [])  // the one running still holds the slot
        #expect(scheduler.finish(id(1)) == [id(5_001)])
        #expect(scheduler.waitingCount == 0 && scheduler.runningCount == 1)
    }

    @Test func suspendHoldsEverythingAndResumeDrains() {
        var scheduler = RequestScheduler(limits: .init(maxConcurrent: nil, maxPerHost: nil))
        _ = scheduler.enqueue(id(1), host: "a", priority: .normal)
        scheduler.suspend()
        #expect(scheduler.enqueue(id(2), host: "a", priority: .normal) == .wait)
        #expect(scheduler.enqueue(id(3), host: "b", priority: .high) == .wait)
        #expect(scheduler.finish(id(1)) == [])
        #expect(scheduler.resume() == [id(3), id(2)])
        #expect(scheduler.waitingCount == 0)
    }

    @Test func raisingTheLimitStartsWaitingRequests() {
        var scheduler = RequestScheduler(limits: .init(maxConcurrent: 1, maxPerHost: nil))
        _ = scheduler.enqueue(id(1), host: "a", priority: .normal)
        _ = scheduler.enqueue(id(2), host: "a", priority: .normal)
        _ = scheduler.enqueue(id(3), host: "a", priority: .normal)
        #expect(scheduler.setLimits(.init(maxConcurrent: 3, maxPerHost: nil)) == [id(2), id(3)])
    }
}

@Suite("Rate limits")
struct RateLimitTests {
    let start = ContinuousClock.now

    @Test func minimumIntervalRefusesUntilTheIntervalPasses() {
        var bucket = TokenBucket(.minimumInterval(.milliseconds(100)), now: start)
        #expect(bucket.take(now: start, waits: false) == .proceed)
        guard case .refuse(let wait) = bucket.take(now: start + .milliseconds(40), waits: false) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(abs(wait.seconds - 0.06) < 0.001)
        #expect(bucket.take(now: start + .milliseconds(100), waits: false) == .proceed)
    }

    @Test func waitingReservesConsecutiveSlots() {
        var bucket = TokenBucket(.minimumInterval(.milliseconds(100)), now: start)
        #expect(bucket.take(now: start, waits: true) == .proceed)
        guard case .wait(let first) = bucket.take(now: start, waits: true),
            case .wait(let second) = bucket.take(now: start, waits: true)
        else {
            Issue.record("expected waits")
            return
        }
        #expect(abs(first.seconds - 0.1) < 0.001)
        #expect(abs(second.seconds - 0.2) < 0.001)
    }

    @Test func tokenBucketAllowsABurstThenRefills() {
        var bucket = TokenBucket(.tokenBucket(capacity: 3, refillEvery: .milliseconds(50)), now: start)
        for _ in 0..<3 { #expect(bucket.take(now: start, waits: false) == .proceed) }
        #expect(bucket.take(now: start, waits: false) != .proceed)
        #expect(bucket.take(now: start + .milliseconds(50), waits: false) == .proceed)
    }

    @Test func rulesCoverHostsAndWholePathSegments() {
        let rule = RateLimitRule(host: "api.example.com", pathPrefix: "/search", limit: .minimumInterval(.seconds(1)))
        #expect(rule.covers(URL(string: "https://api.example.com/search?q=1")!))
        #expect(rule.covers(URL(string: "https://API.example.com/search/users")!))
        #expect(!rule.covers(URL(string: "https://api.example.com/searching")!))
        #expect(!rule.covers(URL(string: "https://other.example.com/search")!))
        #expect(RateLimitRule(limit: .minimumInterval(.seconds(1))).covers(URL(string: "http://h")!))
    }
}

@Suite("Pool keys and messages")
struct PoolKeyTests {
    @Test func parameterSignatureIgnoresOrderAndMergesTheURLQuery() {
        let a = PooledRequest.signature(["b": 2, "a": "x y"], url: URL(string: "https://h/p?c=3"))
        let b = PooledRequest.signature(["c": 3, "a": "x y", "b": 2], url: nil)
        #expect(a == b)
        #expect(a == "a=x%20y&b=2&c=3")
        #expect(PooledRequest.stripQuery(URL(string: "https://h/p?x=1#f")!).absoluteString == "https://h/p")
    }

    @Test func coalescingKeysSeparateWhatChangesTheAnswer() {
        let url = URL(string: "https://h/p?a=1")!
        let plain = PreparedRequest(method: .get, url: url)
        var authorized = plain
        authorized.headers[.authorization] = "Bearer x"
        let names = SchedulingOptions().coalescingHeaders
        #expect(CoalescingKey(plain, varyingHeaders: names) == CoalescingKey(plain, varyingHeaders: names))
        #expect(CoalescingKey(plain, varyingHeaders: names) != CoalescingKey(authorized, varyingHeaders: names))
        var conditional = plain
        conditional.headers[.ifNoneMatch] = "\"v1\""
        #expect(CoalescingKey(plain, varyingHeaders: names) != CoalescingKey(conditional, varyingHeaders: names))
        var tagged = authorized  // a header that does not change the answer does not separate the calls
        tagged.headers[HTTPField.Name("X-Trace")!] = "1"
        #expect(CoalescingKey(tagged, varyingHeaders: names) == CoalescingKey(authorized, varyingHeaders: names))
        var twoValues = authorized  // every value of a name counts, in order
        twoValues.headers.append(HTTPField(name: .accept, value: "a"))
        twoValues.headers.append(HTTPField(name: .accept, value: "b"))
        var swapped = authorized
        swapped.headers.append(HTTPField(name: .accept, value: "b"))
        swapped.headers.append(HTTPField(name: .accept, value: "a"))
        #expect(CoalescingKey(twoValues, varyingHeaders: names) != CoalescingKey(swapped, varyingHeaders: names))
        #expect(CoalescingKey(PreparedRequest(method: .post, url: url), varyingHeaders: names) == nil)
        let putA = PreparedRequest(method: .put, url: url, body: .bytes(Data("a".utf8)))
        let putB = PreparedRequest(method: .put, url: url, body: .bytes(Data("b".utf8)))
        #expect(CoalescingKey(putA, varyingHeaders: names) != nil)
        // two PUTs of different bytes are two calls; the same bytes, one
        #expect(CoalescingKey(putA, varyingHeaders: names) != CoalescingKey(putB, varyingHeaders: names))
        #expect(CoalescingKey(putA, varyingHeaders: names) == CoalescingKey(putA, varyingHeaders: names))
    }

    @Test func userMessagesFitTheFailure() {
        let messages = UserMessages(connectionError: "net", tooFrequent: "slow down", offline: "offline")
        #expect(messages.message(for: CourierError(code: .tooFrequent, message: "")) == "slow down")
        #expect(messages.message(for: CourierError(code: .connectionReset, message: "")) == "net")
        #expect(messages.message(for: CourierError(code: .offline, message: "")) == "offline")
        #expect(messages.message(for: CourierError(code: .decoding, message: "")) == nil)
    }

    @Test func batchOutcomeNamesTheFirstRealFailure() throws {
        let request = PreparedRequest(method: .get, url: URL(string: "https://h/")!)
        let ok = Response<Int>(
            value: 1,
            request: request,
            status: .ok,
            headers: [:],
            body: Data(),
            timing: Timing(startDate: Date(), start: .now, firstByte: nil, end: .now)
        )
        let outcome = BatchOutcome<Int>(results: [
            .success(ok), .failure(.cancelled()), .failure(CourierError(code: .timeout, message: "t")),
        ])
        #expect(outcome.failedIndices == [1, 2])
        #expect(throws: CourierError.self) { _ = try outcome.responses }
        do { _ = try outcome.responses } catch let error as CourierError {
            #expect(error.code == .batchFailed && error.step == 2)
        }
        #expect(try BatchOutcome<Int>(results: [.success(ok)]).responses.count == 1)
    }
}

@Suite("Pool state")
struct PoolStateTests {
    func call(_ path: String, tag: String? = nil) -> Call {
        var request = Request<Data>.get(path)
        request.tag = tag
        return Call(
            request.erased,
            prepared: PreparedRequest(method: .get, url: URL(string: "https://h\(path)")!, tag: tag),
            start: .now,
            limits: ResponseLimits(),
            cookies: [.send, .store],
            log: nil
        )
    }

    @Test func aCallerLeavesOnceAndIsNotToldAgainWhenItsRequestEnds() {
        var state = PoolState(scheduling: SchedulingOptions())
        let call = Call.forTesting()
        let id = state.register(call, deadline: .now + .seconds(60)).id
        let departure = state.leave(id)
        let again = state.leave(id)
        #expect(departure?.cancelsRequest == true && departure?.call === call && again == nil)
        #expect(state.departedCount == 1)
        let info = state.finish(id).info  // the caller already heard `cancelled`
        #expect(info == nil && state.departedCount == 0 && state.entries.isEmpty)
    }

    @Test func aFinishedRequestReportsItsInfoOnce() {
        var state = PoolState(scheduling: SchedulingOptions())
        let id = state.register(call("/b?x=1", tag: "t"), deadline: .now + .seconds(60)).id
        let first = state.markRunning(id, coalesced: false)
        let second = state.markRunning(id, coalesced: false)  // `started` once per request
        #expect(first?.state == .running && second == nil)
        let info = state.finish(id).info
        let again = state.finish(id).info
        #expect(info?.tag == "t" && info?.url.absoluteString == "https://h/b" && info?.parameterSignature == "x=1")
        #expect(again == nil)
    }

    @Test func aLeaderWhoseCallNobodySharesIsCancelledWhenItsCallerGoes() {
        var state = PoolState(scheduling: SchedulingOptions())
        let id = state.register(call("/c"), deadline: .now + .seconds(60)).id
        let key = CoalescingKey(PreparedRequest(method: .get, url: URL(string: "https://h/c")!), varyingHeaders: [])!
        state.entries[id]?.leads = key
        state.calls[key] = SharedCall(leader: id)
        let departure = state.leave(id)
        #expect(departure?.cancelsRequest == true)
    }

    /// A leader that ends before running its call hands it to its oldest follower whose caller is still there; a
    /// follower whose caller has gone is let go with `cancelled`, and a call nobody is left for goes.
    @Test func aCallThatNeverRanGoesToTheOldestFollowerStillThere() async throws {
        let state = Locked(PoolState(scheduling: SchedulingOptions()))
        let key = CoalescingKey(PreparedRequest(method: .get, url: URL(string: "https://h/d")!), varyingHeaders: [])!
        let (leader, gone, next, last) = state.withLock { state in
            let ids = (0..<4).map { _ in
                state.register(call("/d"), deadline: .now + .seconds(60)).id
            }
            #expect(state.firstCall(ids[0], sharing: key).takesSlot)
            for id in ids.dropFirst() { #expect(!state.firstCall(id, sharing: key).takesSlot) }
            return (ids[0], ids[1], ids[2], ids[3])
        }
        let waits = [gone, next, last].map { id in
            Task {
                try await withCheckedThrowingContinuation { (wait: SharedCall.Follower) in
                    state.withLock { $0.calls[key]?.followers[id] = wait }
                }
            }
        }
        while state.withLock({ $0.calls[key]?.followers.count }) != 3 { await Task.yield() }
        _ = state.withLock { $0.leave(gone) }
        let handover = state.withLock { $0.finish(leader).handover }
        #expect(handover.departed.count == 1)
        handover.successor?.resume(returning: nil)
        for wait in handover.departed { wait.resume(throwing: CourierError.cancelled()) }
        #expect((try await waits[1].value) == nil, "the oldest follower still there leads")
        await #expect(throws: CourierError.self) { try await waits[0].value }
        #expect(state.withLock { $0.calls[key]?.leader } == next && state.withLock { $0.entries[next]?.leads } == key)

        let rest = state.withLock { $0.finish(next).handover }  // it ends before running the call too
        #expect(rest.successor != nil && rest.departed.isEmpty)
        rest.successor?.resume(returning: nil)
        #expect((try await waits[2].value) == nil)
        _ = state.withLock { $0.finish(last) }
        #expect(state.withLock { $0.calls.isEmpty })
    }
}
