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
