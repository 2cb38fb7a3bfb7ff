import CoreMetrics
public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Every request a ``Session`` has in flight: what runs and what waits, and the controls over them (WYNetwork's
/// request management, HLNetworking's observers, RBEFireworks' suspend).
///
/// ```swift
/// let pool = session.pool
/// print(await pool.log())                 // one line per request
/// await pool.cancelAll(tag: "feed")       // callers get .cancelled
/// for await event in pool.events { … }    // started / finished / failed / cancelled
/// ```
///
/// Limits, priorities and rate limits come from ``Configuration/scheduling``.
public actor RequestPool {
    /// The pool's state sits behind a lock rather than the actor's executor: every request registers and asks
    /// for a slot, and a hop onto the actor per request costs measurable throughput. The public controls still
    /// go through the actor, so they run one at a time. Internal so the coalescing extension can reach it.
    let state: Locked<PoolState>
    let broadcaster = EventBroadcaster<PoolEvent>(replaysLatest: false)

    init(scheduling: SchedulingOptions) {
        state = Locked(PoolState(scheduling: scheduling))
    }

    // MARK: Queries

    /// How many requests are in flight, waiting or running.
    public var count: Int { state.withLock { $0.entries.count - $0.departedCount } }

    /// Whether no request is in flight.
    public var isEmpty: Bool { count == 0 }

    /// Requests still running, including those whose callers have gone while they finish a call that identical
    /// requests share. Zero soon after everything ends: nothing is left behind.
    public var taskCount: Int { state.withLock { $0.entries.count } }

    /// The requests in flight, oldest first.
    public func snapshot() -> [PooledRequest] {
        state.withLock { $0.entries.values.filter { !$0.callerLeft }.map(\.info) }.sorted { $0.id < $1.id }
    }

    /// A readable report: a summary line, then one line per request with sensitive parameters redacted.
    public func log(redactor: Redactor = .standard) -> String {
        let requests = snapshot()
        let waiting = requests.filter { $0.state == .waiting }.count
        var lines = ["\(requests.count) in flight: \(requests.count - waiting) running, \(waiting) waiting"]
        let now = Date()
        lines += requests.map { $0.line(now: now, redactor: redactor) }
        return lines.joined(separator: "\n")
    }

    /// What happens to requests from now on. Each call gives a new stream; end it by leaving the loop.
    public nonisolated var events: AsyncStream<PoolEvent> { broadcaster.subscribe() }

    // MARK: Cancelling

    /// Cancels one request; `false` when it is no longer in flight.
    @discardableResult
    public func cancel(_ id: RequestID) -> Bool {
        cancel { $0.id == id } > 0
    }

    /// Cancels every request to `url`, whatever its query or parameters; returns how many.
    @discardableResult
    public func cancelAll(url: URL) -> Int {
        let target = PooledRequest.stripQuery(url)
        return cancel { $0.url == target }
    }

    /// Cancels the requests with this method, URL and parameters (the URL's own query items count as
    /// parameters; order does not matter); returns how many.
    @discardableResult
    public func cancel(method: HTTPRequest.Method, url: URL, parameters: Parameters = [:]) -> Int {
        let target = PooledRequest.stripQuery(url)
        let signature = PooledRequest.signature(parameters, url: url)
        return cancel { $0.method == method && $0.url == target && $0.parameterSignature == signature }
    }

    /// Cancels every request with this tag; returns how many.
    @discardableResult
    public func cancelAll(tag: String) -> Int {
        cancel { $0.tag == tag }
    }

    /// Cancels every request in flight; returns how many.
    @discardableResult
    public func cancelAll() -> Int {
        cancel { _ in true }
    }

    /// Cancels every request still waiting (for a slot, its rate limit or a suspended pool) and lets the running
    /// ones finish: a graceful ``cancelAll()`` (RBEFireworks' cancel-all that drains). Returns how many waiting
    /// requests it cancelled, once every request that was running when it was called has ended.
    ///
    /// Requests sent while it waits are not held back; ``suspend()`` the pool first to keep them waiting. Cancelling
    /// the task that calls it stops the wait, not the requests.
    @discardableResult
    public func drain() async -> Int {
        let events = broadcaster.subscribe()  // before reading the state, so no running request ends unseen
        let (waiting, running) = state.withLock { state in
            var waiting: [RequestID] = []
            var running: Set<RequestID> = []
            for entry in state.entries.values where !entry.callerLeft {
                if entry.info.state == .waiting { waiting.append(entry.info.id) } else { running.insert(entry.info.id) }
            }
            return (waiting, running)
        }
        for id in waiting { leave(id) }
        var unfinished = running
        var iterator = events.makeAsyncIterator()
        while !unfinished.isEmpty, let event = await iterator.next() {
            switch event {
            case .finished(let request, _), .failed(let request, _), .cancelled(let request):
                unfinished.remove(request.id)
            case .started, .suspended, .resumed: break
            }
        }
        return waiting.count
    }

    private func cancel(where matches: (PooledRequest) -> Bool) -> Int {
        let ids = state.withLock { state in
            state.entries.values.filter { !$0.callerLeft && matches($0.info) }.map(\.info.id)
        }
        for id in ids { leave(id) }
        return ids.count
    }

    // MARK: Suspending

    /// Stops starting waiting requests; running ones go on. New requests wait too.
    public func suspend() {
        state.withLock { $0.scheduler.suspend() }
    }

    /// Starts waiting requests again.
    public func resume() {
        let started = state.withLock { $0.start($0.scheduler.resume()) }
        Self.wake(started)
    }

    /// Whether the pool is suspended.
    public var isSuspended: Bool { state.withLock { $0.scheduler.isSuspended } }

    /// Suspends one request (RBEFireworks' and HLNetworking's suspend of a single request); `false` when it is not
    /// in flight or already suspended.
    ///
    /// Waiting, it does not start, even when a slot is free, until ``resume(_:)``. Running, it keeps its slot, a
    /// file or stream body stops being sent, and its connection stops reading the answer: the server is held back
    /// by TCP, nothing piles up in memory. Between two attempts it waits before the next. Its timeouts keep
    /// running, as a suspended `URLSessionTask`'s do: a pause longer than the read-idle timeout ends the request
    /// with ``CourierError/Code/timeout``. A request that shares an identical one's call (coalesced) pauses only
    /// when the one making the call is suspended.
    @discardableResult
    public func suspend(_ id: RequestID) -> Bool {
        guard let entry = state.withLock({ $0.suspend(id) }) else { return false }
        entry.listeners?.tell { $0.requestWillSuspend($1) }
        entry.call.suspend()
        broadcaster.yield(.suspended(entry.info))
        return true
    }

    /// Resumes a request suspended with ``suspend(_:)``; `false` when it is not suspended.
    @discardableResult
    public func resume(_ id: RequestID) -> Bool {
        guard let (entry, started) = state.withLock({ $0.resume(id) }) else { return false }
        entry.call.resume()
        Self.wake(started)
        entry.listeners?.tell { $0.requestDidResume($1) }
        broadcaster.yield(.resumed(entry.info))
        return true
    }

    // MARK: Running requests (used by the session)

    /// Applies new limits and rate-limit rules (after ``Session/updateConfiguration(_:)``).
    nonisolated func apply(_ scheduling: SchedulingOptions) {
        let started = state.withLock { $0.apply(scheduling) }
        Self.wake(started)
    }

    /// Registers the request, runs `operation` (the call's attempts, up to its final answer) in the caller's own
    /// task, and reports the outcome as an event. Validating and decoding the answer happen after it returns,
    /// out of the pool.
    ///
    /// No task is made per request: whatever the request waits on installs itself in its ``Call``, which
    /// ``cancel(_:)`` and the rest, the deadline (when `deadline` passes) and the caller's own cancellation all
    /// cancel through. Cancelling the caller cancels the operation, unless it runs a call that identical requests
    /// share (see ``leave(_:)``): then the call goes on for them, and the caller hears
    /// ``CourierError/Code/cancelled`` when it ends.
    ///
    /// The pool decides the request's ``FirstCall`` as it registers: with a `key`, it follows the identical
    /// request's call in flight, or leads one. Unless it follows, `operation` runs once it holds its slot. It
    /// registers and asks for the slot in one lock round trip, and gives the slot back and ends in one more. A
    /// later attempt gives the first one's slot back (``releaseSlot(_:)``) and asks again through
    /// ``withSlot(_:url:priority:call:_:)``.
    ///
    /// `failure` makes what the request throws a ``CourierError`` (a cancellation at `deadline`, even in the wait for
    /// the slot, is the request's timeout).
    nonisolated(nonsending) func track(
        _ call: Call,
        sharing key: CoalescingKey? = nil,
        queuedGauge: Meter? = nil,
        failure: (any Error) -> CourierError,
        _ operation: nonisolated(nonsending) (RequestID, FirstCall) async throws -> ResponseBody
    )
        async throws -> ResponseBody
    {
        let url = call.prepared.url
        let priority = call.request.priority
        let host = call.prepared.urlFacts.hostKey
        let (id, watcher, first, admission) = state.withLock { state in
            let (id, watcher) = state.register(call, deadline: call.deadline)
            let first = state.firstCall(id, sharing: key)
            return (
                id, watcher, first,
                first.takesSlot ? state.admit(id, url: url, host: host, priority: priority, now: .now) : nil
            )
        }
        if let watcher { Self.watchDeadlines(state, watcher) }
        let response: ResponseBody  // no Result in between: matching one copied the whole answer
        do {
            response = try await withTaskCancellationHandler {
                if let admission {
                    try await takeSlot(
                        id,
                        admission,
                        url: url,
                        host: host,
                        priority: priority,
                        call: call,
                        queuedGauge: queuedGauge
                    )
                }
                return try await operation(id, first)
            } onCancel: {
                leave(id)
            }
        } catch {
            let failure = failure(error)
            guard let info = end(id) else { throw CourierError.cancelled() }  // it left, and was told
            broadcaster.yield(failure.code == .cancelled ? .cancelled(info) : .failed(info, failure))
            throw failure
        }
        // A call it led and delivered from its first attempt goes to the requests that joined it in the same round trip.
        guard let info = end(id, handingOver: .success(response)) else { throw CourierError.cancelled() }
        broadcaster.yield(.finished(info, response.status))
        return response
    }

    /// Gives back the slot `id` took through ``track(_:deadline:sharing:_:)``, before a later attempt asks for one
    /// through ``withSlot(_:url:priority:call:_:)``.
    nonisolated func releaseSlot(_ id: RequestID) {
        Self.wake(state.withLock { $0.releaseSlot(id) })
    }

    /// Ends `id`, first giving back the slot it may hold, in one lock round trip; its info unless its caller had
    /// already gone. A call it led but never ran goes on, led by one of the requests waiting for it.
    ///
    /// With `result`, the outcome of a shared call `id` led and ran, that call ends too, and the requests that joined
    /// it get `result`.
    nonisolated func end(
        _ id: RequestID,
        handingOver result: Result<ResponseBody, any Error>? = nil
    ) -> PooledRequest? {
        let (info, handover, started, followers) = state.withLock { state in
            let started = state.releaseSlot(id)
            let followers = result == nil ? [] : state.closeSharedCall(ledBy: id).followers
            let (info, handover) = state.finish(id)
            return (info, handover, started, followers)
        }
        Self.wake(started)
        if let result { for follower in followers { follower.resume(with: result.map { $0 }) } }
        handover.successor?.resume(returning: nil)
        for follower in handover.departed { follower.resume(throwing: CourierError.cancelled()) }
        return info
    }

    /// Starts `watcher`, which cancels the requests past their deadline for as long as requests with deadlines
    /// remain (or until a watcher that wakes sooner replaces it). It holds the pool's state, not the pool.
    static func watchDeadlines(_ state: Locked<PoolState>, _ watcher: DeadlineSchedule.Watcher) {
        watcher.run(
            expire: { generation, now in state.withLock { $0.expireDeadlines(generation: generation, now: now) } },
            fire: { $0.cancel() }
        )
    }

    /// The caller of `id` goes (cancelled by its task or through the pool): what the request waits on is
    /// cancelled, and the request ends with ``CourierError/Code/cancelled``. Not while it runs a call that
    /// identical requests still wait for; that call goes on for them.
    nonisolated func leave(_ id: RequestID) {
        guard let departure = state.withLock({ $0.leave(id) }) else { return }
        departure.listeners?.tell { $0.requestWillCancel($1) }
        if departure.cancelsRequest { departure.call.cancel() }
        broadcaster.yield(.cancelled(departure.info))
    }

    /// Tells the subscribers that `info`'s request started (it joined an identical request's call).
    nonisolated func reportStarted(_ info: PooledRequest) {
        broadcaster.yield(.started(info))
    }

    /// Resumes the requests that start now, each waiting for its slot.
    static func wake(_ continuations: [CheckedContinuation<Void, any Error>]) {
        for continuation in continuations { continuation.resume() }
    }
}
