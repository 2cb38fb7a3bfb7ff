import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A wait that ends once, whichever comes first: what its starter arranged (a timer, the end of a task) or the
/// request's ``Call``. A request runs in its caller's task, which the pool cannot cancel, so `Task.sleep` or
/// `task.value` alone would hear neither the pool nor the deadline.
final class CancellableWait: RequestCancellable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Void, any Error>)
        case over(Result<Void, any Error>)
    }

    private let state = Locked(State.idle)

    private init() {}

    /// Waits until `start`'s arrangement calls ``end(_:)`` or `call` cancels (``CourierError/Code/cancelled``).
    /// `start` runs only when the wait has not ended already, and returns what to undo once it has ended (a
    /// timer to cancel), if anything.
    @inline(never)  // a rare wait: its continuation stays out of the callers' frames
    static func wait(call: Call, _ start: (CancellableWait) -> (@Sendable () -> Void)?) async throws {
        let wait = CancellableWait()
        var undo: (@Sendable () -> Void)?
        defer { undo?() }
        try await call.whileWaiting(on: wait) {
            try await withCheckedThrowingContinuation { continuation in
                let over = wait.state.withLock { state -> Result<Void, any Error>? in
                    if case .over(let result) = state { return result }
                    state = .waiting(continuation)
                    return nil
                }
                if let over { return continuation.resume(with: over) }
                undo = start(wait)
            }
        }
    }

    func cancel() { end(.failure(CourierError.cancelled())) }

    /// Ends the wait with `result`; the first end wins.
    func end(_ result: Result<Void, any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            switch state {
            case .over: return nil
            case .idle:
                state = .over(result)
                return nil
            case .waiting(let continuation):
                state = .over(result)
                return continuation
            }
        }
        continuation?.resume(with: result)
    }
}

/// A sleep that a request's ``Call`` can cut short: a retry's pause, a rate limit's wait.
enum CancellableSleep {
    /// Waits `delay`; throws ``CourierError/cancelled(_:)`` when `call` cancels first.
    @inline(never)  // a retry's or rate limit's pause: its closure stays out of the callers' frames
    static func sleep(for delay: Duration, call: Call) async throws {
        try await CancellableWait.wait(call: call) { wait in
            let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: TimeAmount(delay)) {
                wait.end(.success(()))
            }
            return { timer.cancel() }
        }
    }
}

/// One caller's wait for a task that many callers share (the credential refresh every refused call waits for):
/// the caller's ``Call`` cuts it short, and the task goes on for the others.
enum SharedTaskWait {
    /// Waits for `task`, or until `call` cancels the wait.
    @inline(never)
    static func wait(for task: Task<Void, any Error>, call: Call) async throws {
        try await CancellableWait.wait(call: call) { wait in
            Task { wait.end(await task.result) }
            return nil
        }
    }
}
