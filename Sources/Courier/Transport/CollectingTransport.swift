import Foundation
import HTTPTypes

/// How a body read whole is read: within which limits, and whether it is decompressed on the way.
struct BodyReading: Sendable {
    var limits: ResponseLimits
    var decompresses: Bool
}

/// A transport that reads a body whole where it arrives, and stops when the request's ``Canceller`` says so
/// rather than when the calling task is cancelled: the request path of every response the session reads whole.
///
/// ``AsyncHTTPClientTransport`` is one: it collects the body in AsyncHTTPClient's delegate, on the connection's
/// event loop, and wakes its caller when the head arrives (see `AnswerHandoff`), with no task of its own. A ``CancellableTransport`` is read in its
/// caller's task too; any other transport goes through ``Transport/fetchInTask(_:reading:canceller:)``, which pays
/// a task per request for the same behaviour. ``WholeBodyFetch`` picks one of the three, once per session.
protocol CollectingTransport: Transport {
    /// Sends `request` (without following redirects) and returns the response with its whole body, read within
    /// `reading`. `request.deadline` is the caller's to enforce, through `canceller`.
    nonisolated(nonsending) func fetch(_ request: TransportRequest, reading: BodyReading, canceller: Canceller) async throws -> ResponseBody
}

/// How a session reads bodies whole through its transport: the transport's own way when it has one, else in a
/// task per exchange. Chosen once, when the session is made, so a request casts nothing.
enum WholeBodyFetch: Sendable {
    case collecting(any CollectingTransport)
    case cancellable(any CancellableTransport)
    case inTask(any Transport)

    init(_ transport: any Transport) {
        if let collecting = transport as? any CollectingTransport {
            self = .collecting(collecting)
        } else if let cancellable = transport as? any CancellableTransport {
            self = .cancellable(cancellable)
        } else {
            self = .inTask(transport)
        }
    }

    /// Sends `request` and reads its body whole within `reading`; `canceller` stops it. Inlined into its one
    /// caller, so the switch costs no async frame of its own.
    @inline(__always)
    nonisolated(nonsending) func fetch(_ request: TransportRequest, reading: BodyReading, canceller: Canceller) async throws -> ResponseBody {
        switch self {
        case .collecting(let transport): try await transport.fetch(request, reading: reading, canceller: canceller)
        case .cancellable(let transport): try await transport.fetchCancellable(request, reading: reading, canceller: canceller)
        case .inTask(let transport): try await transport.fetchInTask(request, reading: reading, canceller: canceller)
        }
    }
}

extension Transport {
    /// ``CollectingTransport/fetch(_:reading:canceller:)`` for a transport that hears only its task's cancellation:
    /// the exchange runs in a task of its own, which `canceller` cancels, and stops taking parts of the body while
    /// the request is suspended.
    func fetchInTask(_ request: TransportRequest, reading: BodyReading, canceller: Canceller) async throws -> ResponseBody {
        let task = Task {
            try await BodyCollector(reading: reading, suspension: canceller).collect(send(request), method: request.method)
        }
        return try await canceller.whileWaiting(on: TaskCancellable(task)) { try await task.value }
    }
}

/// A task, as a ``Canceller`` sees it.
final class TaskCancellable<Success: Sendable, Failure: Error>: RequestCancellable {
    private let task: Task<Success, Failure>

    init(_ task: Task<Success, Failure>) {
        self.task = task
    }

    func cancel() { task.cancel() }
}
