import NIOConcurrencyHelpers

/// Something a request is waiting on that can be stopped from outside its task: AsyncHTTPClient's task, the
/// wait for a slot, a retry's sleep.
protocol RequestCancellable: AnyObject, Sendable {
    /// Stops it; whoever waits on it hears an error soon after. Called at most once per installation.
    func cancel()
}

/// A request's canceller slot: what the request waits on at this moment installs itself here, and the caller's
/// cancellation, the pool's controls and the deadline all cancel through it. A request runs in its caller's own
/// task, not in one the pool could cancel, so this is how the pool reaches it.
///
/// Once cancelled it stays cancelled: whatever is installed later is cancelled at once, so a cancellation that
/// arrives between two waits stops the next one.
final class Canceller: Sendable {
    private enum State {
        case idle
        case waitingOn(any RequestCancellable)
        case cancelled
    }

    private let state = NIOLockedValueBox(State.idle)

    /// Whether ``cancel()`` has been called.
    var isCancelled: Bool {
        state.withLockedValue { if case .cancelled = $0 { true } else { false } }
    }

    /// Makes `cancellable` what a cancel stops; when the request was cancelled already, cancels it at once.
    func install(_ cancellable: any RequestCancellable) {
        let cancelledAlready = state.withLockedValue { state in
            if case .cancelled = state { return true }
            state = .waitingOn(cancellable)
            return false
        }
        if cancelledAlready { cancellable.cancel() }
    }

    /// The wait `cancellable` ended; a later cancel does not reach it.
    func remove(_ cancellable: any RequestCancellable) {
        state.withLockedValue { state in
            if case .waitingOn(let current) = state, current === cancellable { state = .idle }
        }
    }

    /// Cancels what the request waits on now, and everything it would wait on later.
    func cancel() {
        let current = state.withLockedValue { state -> (any RequestCancellable)? in
            defer { state = .cancelled }
            if case .waitingOn(let current) = state { return current }
            return nil
        }
        current?.cancel()
    }

    /// Runs `operation`, a wait that `cancellable` ends, with `cancellable` installed.
    nonisolated(nonsending) func whileWaiting<T>(on cancellable: any RequestCancellable,
                                                 _ operation: nonisolated(nonsending) () async throws -> T) async throws -> T {
        install(cancellable)
        defer { remove(cancellable) }
        return try await operation()
    }
}
