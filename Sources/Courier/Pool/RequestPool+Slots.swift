import CoreMetrics

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A request's slot: its rate limit, then a place under the concurrency limits, waited for where it must be.
extension RequestPool {
    /// Runs `body` once the request `id` may use the network: after its rate limit allows it and a slot under
    /// the concurrency limits is free. Releases the slot afterwards. When neither is in the way, as usual, it
    /// takes the lock once on the way in. Runs on its caller's executor, like the steps of ``RequestExecutor``;
    /// its waits install themselves in `call`.
    nonisolated(nonsending) func withSlot<T>(
        _ id: RequestID,
        url: URL,
        priority: RequestPriority,
        call: Call,
        queuedGauge: Meter? = nil,
        _ body: nonisolated(nonsending) () async throws -> T
    ) async throws -> T {
        let host = URLFacts(url).hostKey
        let admission = state.withLock { $0.admit(id, url: url, host: host, priority: priority, now: .now) }
        try await takeSlot(
            id,
            admission,
            url: url,
            host: host,
            priority: priority,
            call: call,
            queuedGauge: queuedGauge
        )
        defer { Self.wake(state.withLock { $0.start($0.scheduler.finish(id)) }) }
        return try await body()
    }

    /// Waits out `admission`, what asking for a slot for `id` gave, until `id` holds its slot: throws when its rate
    /// limit refuses it, waits when the limit asks it to, queues, and reports the start.
    nonisolated(nonsending) func takeSlot(
        _ id: RequestID,
        _ admission: PoolState.Admission,
        url: URL,
        host: String,
        priority: RequestPriority,
        call: Call,
        queuedGauge: Meter?
    ) async throws {
        var queueing: PoolState.Queueing
        switch admission {
        case .refused(let retryAfter):
            var error = CourierError(
                code: .tooFrequent,
                message: "requests to \(Redactor.standard.redact(url: url)) are sent too often; "
                    + "the next one is allowed in \(retryAfter.formattedSeconds)"
            )
            error.retryAfterValue = String(Int(retryAfter.seconds.rounded(.up)))
            throw error
        case .rateLimited(let wait):
            try await CancellableSleep.sleep(for: wait, call: call)
            queueing = state.withLock { $0.queue(id, host: host, priority: priority) }
        case .admitted(let admitted):
            queueing = admitted
        }
        if case .queued = queueing {
            // The server's queued gauge (``TelemetryNames/Metric/queuedRequests``), when metrics are recorded.
            queuedGauge?.increment()
            defer { queuedGauge?.decrement() }
            try await call.whileWaiting(on: SlotWait(pool: self, id: id)) { try await waitForSlot(id) }
            queueing = .started(state.withLock { $0.markRunning(id, coalesced: false) })
        }
        if case .started(let info?) = queueing { broadcaster.yield(.started(info)) }
    }

    @inline(never)  // a wait that few requests meet: its continuation's metadata stays out of the callers' frames
    fileprivate nonisolated func waitForSlot(_ id: RequestID) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let resumeNow = state.withLock { state -> Result<Void, any Error>? in
                if state.scheduler.isRunning(id) { return .success(()) }  // started before we got here
                // cancelled first
                if state.slotWaiters.removeValue(forKey: id) != nil { return .failure(CourierError.cancelled()) }
                state.slotWaiters[id] = .waiting(continuation)
                return nil
            }
            if let resumeNow { continuation.resume(with: resumeNow) }
        }
    }

    /// The request `id` stops waiting for a slot: it was cancelled.
    fileprivate nonisolated func stopWaitingForSlot(_ id: RequestID) {
        let waiter = state.withLock { state -> SlotWaiter? in
            guard state.scheduler.cancelWaiting(id) else { return nil }  // already started: it runs and releases
            guard let waiter = state.slotWaiters.removeValue(forKey: id) else {
                state.slotWaiters[id] = .cancelledBeforeWaiting
                return nil
            }
            return waiter
        }
        if case .waiting(let continuation)? = waiter { continuation.resume(throwing: CourierError.cancelled()) }
    }
}

/// A request's wait for a slot, as its ``Call`` sees it.
private final class SlotWait: RequestCancellable {
    let pool: RequestPool
    let id: RequestID

    init(pool: RequestPool, id: RequestID) {
        self.pool = pool
        self.id = id
    }

    func cancel() { pool.stopWaitingForSlot(id) }
}
