/// What the workers of a running ``Batch`` share, behind one lock: which request is next, each result so far and
/// the progress.
///
/// A worker takes its next request and records its result here, so a request's end wakes nobody: the task that
/// runs the batch waits only for its workers to end. Progress is published under the same lock, so subscribers see
/// the counts only grow, whichever worker ends first.
final class BatchLedger<Value: Sendable>: Sendable {
    private struct State {
        var next = 0
        var isStopped = false
        var results: [Result<Response<Value>, CourierError>?]
        var progress: BatchProgress
    }

    private let state: Locked<State>
    private let count: Int

    /// A ledger for `count` requests, none taken yet.
    init(count: Int) {
        self.count = count
        state = Locked(State(results: Array(repeating: nil, count: count), progress: BatchProgress(total: count)))
    }

    /// The index of the next request to start, in input order; `nil` once every request is taken or the batch
    /// stopped taking more.
    func take() -> Int? {
        state.withLock { state in
            guard !state.isStopped, state.next < count else { return nil }
            defer { state.next += 1 }
            return state.next
        }
    }

    /// Records the result of request `index` and publishes the progress through `publish`, under the lock.
    /// `stopOnFailure` (a failure that ends a fail-fast batch) stops the batch from taking more; returns whether
    /// this result was the one that did.
    func record(_ result: Result<Response<Value>, CourierError>, at index: Int, stopOnFailure: Bool,
                publish: (BatchProgress) -> Void) -> Bool {
        state.withLock { state in
            state.results[index] = result
            state.progress.completed += 1
            var stops = false
            switch result {
            case .success(let response): state.progress.bytesReceived += response.body.count
            case .failure:
                state.progress.failed += 1
                stops = stopOnFailure && !state.isStopped
                if stops { state.isStopped = true }
            }
            publish(state.progress)
            return stops
        }
    }

    /// The counts so far.
    var progress: BatchProgress { state.withLock { $0.progress } }

    /// Every result in input order; a request that never started counts as cancelled by an earlier failure.
    func outcome() -> BatchOutcome<Value> {
        let results = state.withLock { $0.results }
        return BatchOutcome(results: results.map { $0 ?? .failure(.cancelled("an earlier request of the batch failed")) })
    }
}
