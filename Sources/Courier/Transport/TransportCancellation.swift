/// How the session stops one exchange of a ``Transport``, from its start until the body has been read: the
/// transport registers with ``onCancel(_:)`` what stops it.
public final class TransportCancellation: Sendable {
    private enum State {
        case open((@Sendable () -> Void)?)
        case cancelled
    }

    private let state = Locked(State.open(nil))

    /// Creates one, not cancelled. The session makes one per exchange; make your own to test a transport.
    public init() {}

    /// Whether the exchange has been cancelled.
    public var isCancelled: Bool {
        state.withLock { if case .cancelled = $0 { true } else { false } }
    }

    /// Makes `stop` what a cancel calls, in place of what an earlier call registered; calls it at once when the
    /// exchange is cancelled already. `stop` runs at most once, on whichever thread cancels, and must not block.
    public func onCancel(_ stop: @escaping @Sendable () -> Void) {
        let cancelledAlready = state.withLock { state in
            guard case .open = state else { return true }
            state = .open(stop)
            return false
        }
        if cancelledAlready { stop() }
    }

    /// Runs `operation` in a task of its own, which a cancel (or the calling task's cancellation) cancels: how a
    /// transport that hears only a task's cancellation meets ``Transport/send(_:cancellation:)``, at the cost of a
    /// task per call. A body it returns that waits for its chunks should stop when ``isCancelled`` turns true.
    public func runInTask<Success: Sendable>(
        _ operation: sending @escaping @isolated(any) () async throws -> Success
    ) async throws -> Success {
        let task = Task(operation: operation)
        onCancel { task.cancel() }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }
}

extension TransportCancellation: RequestCancellable {
    /// Cancels the exchange: calls what ``onCancel(_:)`` registered, once, and anything registered later at once.
    public func cancel() {
        let stop = state.withLock { state -> (@Sendable () -> Void)? in
            defer { state = .cancelled }
            guard case .open(let stop) = state else { return nil }
            return stop
        }
        stop?()
    }
}

/// A transport the session can stop from outside the calling task: every ``Transport`` is one now.
@available(*, deprecated, renamed: "Transport", message: "every Transport takes a TransportCancellation now")
public typealias CancellableTransport = Transport

extension Transport {
    /// Sends `request` and reads its body whole within `reading`, in the calling task: `call` reaches the exchange
    /// through a ``TransportCancellation`` until the body has been read, and the body stops being asked for while
    /// the call is suspended.
    nonisolated(nonsending) func fetchWhole(
        _ request: PreparedRequest,
        reading: BodyReading,
        call: Call
    ) async throws -> ResponseBody {
        let cancellation = TransportCancellation()
        return try await call.whileWaiting(on: cancellation) {
            try await BodyCollector(reading: reading, suspension: call).collect(
                send(request, cancellation: cancellation),
                method: request.method
            )
        }
    }
}

/// A transport that reads a body whole where it arrives, and stops when the request's ``Call`` says so: the fast
/// path of every response the session reads whole.
///
/// ``AsyncHTTPClientTransport`` is one: it collects the body in AsyncHTTPClient's delegate, on the connection's
/// event loop, and wakes its caller when the exchange ends (see `Call.awaitAnswer(installing:starting:)`), with
/// no task of its own. Any other transport is read through ``Transport/fetchWhole(_:reading:call:)``;
/// ``WholeBodyFetch`` picks one of the two, once per session.
protocol CollectingTransport: Transport {
    /// Sends `request` (without following redirects) and returns the response with its whole body, read within
    /// `reading`. `request.deadline` is the caller's to enforce, through `call`.
    nonisolated(nonsending) func fetch(
        _ request: PreparedRequest,
        reading: BodyReading,
        call: Call
    ) async throws -> ResponseBody
}

/// A task, as a ``Call`` sees it.
final class TaskCancellable<Success: Sendable, Failure: Error>: RequestCancellable {
    private let task: Task<Success, Failure>

    init(_ task: Task<Success, Failure>) {
        self.task = task
    }

    func cancel() { task.cancel() }
}
