import NIOConcurrencyHelpers
import NIOCore
import Synchronization

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
///
/// It also carries the request's suspension (``RequestPool/suspend(_:)``): while suspended, the transport reading
/// the answer stops asking for more (``notSuspended(on:)``, ``waitWhileSuspended()``) until a resume or a cancel.
final class Canceller: Sendable {
    private enum Wait {
        case idle
        case waitingOn(any RequestCancellable)
        case cancelled
    }

    private struct State {
        var wait = Wait.idle
        /// What to call when the suspension ends; `nil` while the request is not suspended.
        var resumers: [@Sendable () -> Void]?
    }

    private let state = NIOLockedValueBox(State())
    /// Whether the request is suspended, readable without the lock: the transport asks at every part of a body.
    private let suspended = Atomic<Bool>(false)

    /// Whether ``cancel()`` has been called.
    var isCancelled: Bool {
        state.withLockedValue { if case .cancelled = $0.wait { true } else { false } }
    }

    /// Makes `cancellable` what a cancel stops; when the request was cancelled already, cancels it at once.
    func install(_ cancellable: any RequestCancellable) {
        let cancelledAlready = state.withLockedValue { state in
            if case .cancelled = state.wait { return true }
            state.wait = .waitingOn(cancellable)
            return false
        }
        if cancelledAlready { cancellable.cancel() }
    }

    /// The wait `cancellable` ended; a later cancel does not reach it.
    func remove(_ cancellable: any RequestCancellable) {
        state.withLockedValue { state in
            if case .waitingOn(let current) = state.wait, current === cancellable { state.wait = .idle }
        }
    }

    /// Cancels what the request waits on now, and everything it would wait on later; ends a suspension.
    func cancel() {
        let (current, resumers) = state.withLockedValue {
            state -> ((any RequestCancellable)?, [@Sendable () -> Void]?) in
            defer {
                state.wait = .cancelled
                state.resumers = nil
                suspended.store(false, ordering: .releasing)
            }
            if case .waitingOn(let current) = state.wait { return (current, state.resumers) }
            return (nil, state.resumers)
        }
        for resume in resumers ?? [] { resume() }
        current?.cancel()
    }

    /// Runs `operation`, a wait that `cancellable` ends, with `cancellable` installed.
    nonisolated(nonsending) func whileWaiting<T>(
        on cancellable: any RequestCancellable,
        _ operation: nonisolated(nonsending) () async throws -> T
    ) async throws -> T {
        install(cancellable)
        defer { remove(cancellable) }
        return try await operation()
    }

    // MARK: Suspending

    /// Whether the request is suspended.
    var isSuspended: Bool { suspended.load(ordering: .acquiring) }

    /// Holds the reading of the request's answer until ``resume()``; does nothing once cancelled.
    func suspend() {
        state.withLockedValue { state in
            if case .cancelled = state.wait { return }
            guard state.resumers == nil else { return }
            state.resumers = []
            suspended.store(true, ordering: .releasing)
        }
    }

    /// Lets the reading go on.
    func resume() {
        let resumers = state.withLockedValue { state in
            defer {
                state.resumers = nil
                suspended.store(false, ordering: .releasing)
            }
            return state.resumers
        }
        for resume in resumers ?? [] { resume() }
    }

    /// A future that succeeds once the request is not suspended: at once, nearly always. What an AsyncHTTPClient
    /// delegate returns for a part of the answer, so a suspended request's connection stops reading (TCP
    /// backpressure, nothing buffered) until it is resumed or cancelled.
    func notSuspended(on loop: any EventLoop) -> EventLoopFuture<Void> {
        guard isSuspended else { return loop.makeSucceededVoidFuture() }
        let promise = loop.makePromise(of: Void.self)
        if !whenResumed({ promise.succeed() }) { promise.succeed() }
        return promise.futureResult
    }

    /// Returns once the request is not suspended (or is cancelled): the same hold for a transport read in a task.
    func waitWhileSuspended() async {
        guard isSuspended else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !whenResumed({ continuation.resume() }) { continuation.resume() }
        }
    }

    /// Keeps `resumer` for the end of the suspension; `false` (and nothing kept) when the request is not suspended.
    private func whenResumed(_ resumer: @escaping @Sendable () -> Void) -> Bool {
        state.withLockedValue { state in
            guard state.resumers != nil else { return false }
            state.resumers?.append(resumer)
            return true
        }
    }
}
