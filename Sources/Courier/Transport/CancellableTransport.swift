import NIOConcurrencyHelpers

/// A transport the session can stop from outside the calling task, so a request whose body is read whole runs
/// in its caller's own task, with no task made for it.
///
/// A plain ``Transport`` hears only its task's cancellation, and the session's pool cancels a request (by id, by
/// deadline, by its caller leaving a shared call) without owning its caller's task; so the session runs each
/// exchange of a plain transport in a task of its own, which costs a task and two thread wake-ups per request.
/// A cancellable transport is given a ``TransportCancellation`` instead and registers there what stops it; the
/// Transports article has an example. Its ``Transport/send(_:)`` comes with it: the same exchange, cancelled with
/// the calling task.
public protocol CancellableTransport: Transport {
    /// Sends `request` like ``Transport/send(_:)``, but stops when `cancellation` is cancelled rather than when
    /// the calling task is: from then on this method, and the iteration of the body it returned, throw
    /// ``CourierError`` with code ``CourierError/Code/cancelled`` promptly.
    func send(_ request: TransportRequest, cancellation: TransportCancellation) async throws -> TransportResponse
}

/// How the session stops one exchange of a ``CancellableTransport``, from its start until the body has been
/// read: the transport registers with ``onCancel(_:)`` what stops it.
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

extension CancellableTransport {
    /// Sends `request` through ``send(_:cancellation:)``, cancelled when the calling task is: while the head is
    /// awaited and while the body is read (what ``Session/stream(_:)`` asks of a transport).
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let cancellation = TransportCancellation()
        var response = try await withTaskCancellationHandler {
            try await send(request, cancellation: cancellation)
        } onCancel: {
            cancellation.cancel()
        }
        response.body = response.body.cancelling(onTaskCancel: { cancellation.cancel() })
        return response
    }

    /// ``CollectingTransport/fetch(_:reading:call:)`` in the calling task: `call` reaches the exchange
    /// through a ``TransportCancellation`` until the body has been read.
    nonisolated(nonsending) func fetchCancellable(
        _ request: TransportRequest,
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

/// A transport that reads a body whole where it arrives, and stops when the request's ``Call`` says so
/// rather than when the calling task is cancelled: the request path of every response the session reads whole.
///
/// ``AsyncHTTPClientTransport`` is one: it collects the body in AsyncHTTPClient's delegate, on the connection's
/// event loop, and wakes its caller when the exchange ends (see `Call.awaitAnswer(installing:starting:)`), with
/// no task of its own. A ``CancellableTransport`` is read in its caller's task too; any other transport goes through ``Transport/fetchInTask(_:reading:call:)``, which pays
/// a task per request for the same behaviour. ``WholeBodyFetch`` picks one of the three, once per session.
protocol CollectingTransport: Transport {
    /// Sends `request` (without following redirects) and returns the response with its whole body, read within
    /// `reading`. `request.deadline` is the caller's to enforce, through `call`.
    nonisolated(nonsending) func fetch(
        _ request: TransportRequest,
        reading: BodyReading,
        call: Call
    ) async throws -> ResponseBody
}

extension Transport {
    /// ``CollectingTransport/fetch(_:reading:call:)`` for a transport that hears only its task's cancellation:
    /// the exchange runs in a task of its own, which `call` cancels, and stops taking parts of the body while
    /// the request is suspended.
    func fetchInTask(
        _ request: TransportRequest,
        reading: BodyReading,
        call: Call
    ) async throws -> ResponseBody {
        let task = Task {
            try await BodyCollector(reading: reading, suspension: call).collect(
                send(request),
                method: request.method
            )
        }
        return try await call.whileWaiting(on: TaskCancellable(task)) { try await task.value }
    }
}

/// A task, as a ``Call`` sees it.
final class TaskCancellable<Success: Sendable, Failure: Error>: RequestCancellable {
    private let task: Task<Success, Failure>

    init(_ task: Task<Success, Failure>) {
        self.task = task
    }

    func cancel() { task.cancel() }
}
