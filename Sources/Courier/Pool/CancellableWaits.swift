import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A sleep that a request's ``Canceller`` can cut short (a retry's pause, a rate limit's wait): the request runs in
/// its caller's task, which the pool cannot cancel, so `Task.sleep` would not hear the pool or the deadline.
final class CancellableSleep: RequestCancellable {
    private struct State {
        var continuation: CheckedContinuation<Void, any Error>?
        var timer: Scheduled<Void>?
        var isOver = false
    }

    private let state = NIOLockedValueBox(State())

    private init() {}

    /// Waits `delay`; throws ``CourierError/cancelled(_:)`` when `canceller` cancels first.
    @inline(never)  // a retry's or rate limit's pause: its continuation stays out of the callers' frames
    static func sleep(for delay: Duration, canceller: Canceller) async throws {
        let sleep = CancellableSleep()
        try await canceller.whileWaiting(on: sleep) {
            try await withCheckedThrowingContinuation { continuation in sleep.start(delay, continuation) }
        }
    }

    private func start(_ delay: Duration, _ continuation: CheckedContinuation<Void, any Error>) {
        let loop = MultiThreadedEventLoopGroup.singleton.any()
        let cancelledFirst = state.withLockedValue { state in
            guard !state.isOver else { return true }
            state.continuation = continuation
            state.timer = loop.scheduleTask(in: TimeAmount(delay)) { self.end(throwing: nil) }
            return false
        }
        if cancelledFirst { continuation.resume(throwing: CourierError.cancelled()) }
    }

    func cancel() { end(throwing: CourierError.cancelled()) }

    private func end(throwing error: (any Error)?) {
        let (continuation, timer) = state.withLockedValue { state in
            state.isOver = true
            defer { (state.continuation, state.timer) = (nil, nil) }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        if let error { continuation?.resume(throwing: error) } else { continuation?.resume() }
    }
}

/// One caller's wait for a task that many callers share (the credential refresh every refused call waits for),
/// which that caller's ``Canceller`` can cut short: the caller leaves with ``CourierError/Code/cancelled`` and the
/// task goes on for the others. Awaiting `task.value` alone would hear neither the pool nor the deadline.
final class SharedTaskWait: RequestCancellable {
    private enum State {
        case idle
        case waiting(CheckedContinuation<Void, any Error>)
        case over(Result<Void, any Error>)
    }

    private let state = NIOLockedValueBox(State.idle)

    private init() {}

    /// Waits for `task`, or until `canceller` cancels the wait.
    @inline(never)
    static func wait(for task: Task<Void, any Error>, canceller: Canceller) async throws {
        let wait = SharedTaskWait()
        try await canceller.whileWaiting(on: wait) {
            try await withCheckedThrowingContinuation { continuation in
                let over = wait.state.withLockedValue { state -> Result<Void, any Error>? in
                    if case .over(let result) = state { return result }
                    state = .waiting(continuation)
                    return nil
                }
                if let over { return continuation.resume(with: over) }
                Task { wait.end(await task.result) }
            }
        }
    }

    func cancel() { end(.failure(CourierError.cancelled())) }

    /// The first end wins: the task's result, or the cancellation.
    private func end(_ result: Result<Void, any Error>) {
        let continuation = state.withLockedValue { state -> CheckedContinuation<Void, any Error>? in
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
