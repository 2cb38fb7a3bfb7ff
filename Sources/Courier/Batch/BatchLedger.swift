/// What the workers of a running ``Batch`` share, behind one lock: which request is next, the results that ended
/// before an earlier one, and the progress.
///
/// A worker takes its next request and records its result here, so a request's end wakes nobody: the task that
/// runs the batch waits only for its workers to end. Results are handed on in input order as soon as every earlier
/// one has been: the worker whose result completes the run in order hands it (and any that waited for it) on, one
/// worker at a time, so nothing is kept once it has been handed on. Workers take a request only while fewer than
/// `window` results wait for an earlier one, which bounds what is kept however many requests the batch holds.
/// Progress is published under the same lock, so subscribers see the counts only grow.
final class BatchLedger<Value: Sendable>: Sendable {
    typealias Item = Result<Response<Value>, CourierError>

    /// What a worker does next.
    enum Turn: Equatable {
        /// Send request `index`.
        case request(Int)
        /// The window is full: wait for an earlier result to be handed on.
        case wait
        /// Nothing is left to take, or the batch stopped.
        case done
    }

    private struct State {
        var next = 0
        var isStopped = false
        /// Set when a worker's task is cancelled: no worker waits any more.
        var isCancelled = false
        /// Results that ended while an earlier one had not.
        var ready: [Int: Item] = [:]
        /// How many results were handed on, in input order.
        var delivered = 0
        /// Whether a worker is handing results on; the others leave theirs in `ready`.
        var isDelivering = false
        var waiters: [UnsafeContinuation<Void, Never>] = []
        var progress: BatchProgress
    }

    private let state: Locked<State>
    private let count: Int
    private let window: Int

    /// A ledger for `count` requests, none taken yet, with at most `window` results waiting for an earlier one.
    init(count: Int, window: Int = .max) {
        self.count = count
        self.window = max(1, window)
        state = Locked(State(progress: BatchProgress(total: count)))
    }

    /// The next request to start, in input order.
    func take() -> Turn {
        state.withLock { state in
            guard !state.isStopped, state.next < count else { return .done }
            guard state.next - state.delivered < window else { return .wait }
            defer { state.next += 1 }
            return .request(state.next)
        }
    }

    /// Returns once the window has room again, the batch stopped, or the calling task is cancelled.
    func waitForRoom() async {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.isStopped || state.isCancelled || state.next - state.delivered < window { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiters = state.withLock { state in
                state.isCancelled = true
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Records the result of request `index` and publishes the progress through `publish`, under the lock.
    /// `stopOnFailure` (a failure that ends a fail-fast batch) stops the batch from taking more. Returns whether
    /// this result was the one that did, and the results this worker is now to hand on, in order (then it calls
    /// ``nextDeliveries()`` until that is empty).
    func record(
        _ result: Item,
        at index: Int,
        stopOnFailure: Bool,
        publish: (BatchProgress) -> Void
    ) -> (stops: Bool, deliveries: [(Int, Item)]) {
        let (stops, deliveries, waiters) = state.withLock {
            state -> (Bool, [(Int, Item)], [UnsafeContinuation<Void, Never>]) in
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
            state.ready[index] = result
            guard !state.isDelivering else { return (stops, [], stops ? Self.takeWaiters(&state) : []) }
            state.isDelivering = true
            let (deliveries, waiters) = Self.popReady(&state)
            return (stops, deliveries, stops ? waiters + Self.takeWaiters(&state) : waiters)
        }
        for waiter in waiters { waiter.resume() }
        return (stops, deliveries)
    }

    /// More results for the worker that is handing them on; empty (and it stops) when the next one has not ended.
    func nextDeliveries() -> [(Int, Item)] {
        let (deliveries, waiters) = state.withLock { Self.popReady(&$0) }
        for waiter in waiters { waiter.resume() }
        return deliveries
    }

    /// The results of every request not handed on after the workers ended, and how many of them never started:
    /// one that never started counts as cancelled by an earlier failure.
    func remaining() -> (results: [(Int, Item)], neverStarted: Int) {
        state.withLock { state in
            var neverStarted = 0
            let rest = (state.delivered..<count).map { index -> (Int, Item) in
                if let item = state.ready[index] { return (index, item) }
                neverStarted += 1
                return (index, .failure(.cancelled("an earlier request of the batch failed")))
            }
            state.ready.removeAll()
            state.delivered = count
            return (rest, neverStarted)
        }
    }

    /// The counts so far.
    var progress: BatchProgress { state.withLock { $0.progress } }

    /// The consecutive results from `delivered` on; clears `isDelivering` when there are none. The waiters come
    /// back to be resumed outside the lock when the window moved.
    private static func popReady(_ state: inout State) -> ([(Int, Item)], [UnsafeContinuation<Void, Never>]) {
        var out: [(Int, Item)] = []
        while let item = state.ready.removeValue(forKey: state.delivered) {
            out.append((state.delivered, item))
            state.delivered += 1
        }
        if out.isEmpty { state.isDelivering = false }
        return (out, out.isEmpty ? [] : takeWaiters(&state))
    }

    private static func takeWaiters(_ state: inout State) -> [UnsafeContinuation<Void, Never>] {
        defer { state.waiters.removeAll() }
        return state.waiters
    }
}
