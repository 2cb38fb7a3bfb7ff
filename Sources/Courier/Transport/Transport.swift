public import HTTPTypes

/// The only code that touches sockets. A transport sends one request and returns the response head with a
/// body stream; it does not follow redirects, decompress, retry or validate — the session does those the
/// same way for every transport.
///
/// Courier ships ``AsyncHTTPClientTransport`` (the default), `URLSessionTransport` in the `CourierURLSession`
/// module, and, in `CourierTesting`, a stub transport for unit tests.
///
/// The session stops an exchange through the ``TransportCancellation`` it hands to ``send(_:cancellation:)``, not
/// through the calling task: its pool cancels requests whose caller's task it does not own (by id, tag or URL, at
/// the deadline, when a caller leaves a call it shared), so every transport is read in its caller's own task,
/// with no task made per request. A transport that can only hear a task's cancellation wraps its work in
/// ``TransportCancellation/runInTask(_:)``.
public protocol Transport: Sendable {
    /// Sends `request`; returns once the response head has arrived. Stops when `cancellation` is cancelled, from
    /// its start until the body has been read: from then on this method, and the iteration of the body it
    /// returned, throw ``CourierError`` with code ``CourierError/Code/cancelled`` promptly.
    ///
    /// Throws ``CourierError`` (transports translate their own errors).
    func send(_ request: PreparedRequest, cancellation: TransportCancellation) async throws -> TransportResponse

    /// Releases connections and threads. The session calls it once, when it shuts down.
    func shutdown() async throws
}

extension Transport {
    /// Sends `request` through ``send(_:cancellation:)``, cancelled when the calling task is: while the head is
    /// awaited and while the body is read. For calling a transport directly; the session hands it its own
    /// cancellation.
    public func send(_ request: PreparedRequest) async throws -> TransportResponse {
        let cancellation = TransportCancellation()
        var response = try await withTaskCancellationHandler {
            try await send(request, cancellation: cancellation)
        } onCancel: {
            cancellation.cancel()
        }
        response.body = response.body.cancelling(onTaskCancel: { cancellation.cancel() })
        return response
    }
}

/// What a transport sends: a ``PreparedRequest``, which carries how it is sent too.
@available(*, deprecated, renamed: "PreparedRequest", message: "a transport sends the PreparedRequest itself")
public typealias TransportRequest = PreparedRequest

/// What a transport returns: the head, and the body still arriving.
public struct TransportResponse: Sendable {
    /// The status.
    public var status: HTTPResponse.Status
    /// The headers.
    public var headers: HTTPFields
    /// The body; iterate it once. Errors thrown while iterating are ``CourierError``s.
    public var body: ByteStream
    /// `true` when the transport already removed the `Content-Encoding` (URLSession does), so the session
    /// must not decode again.
    public var isContentDecoded: Bool
    /// The HTTP version that carried the answer, as `HTTP/1.1` or `HTTP/2`; `nil` when the transport does not
    /// say.
    public var version: String?
    /// The transport's body when it can hand its chunks to a sink where they arrive, instead of through ``body``.
    var sinkable: (any SinkableBody)?
    /// The request this answered as it was finally sent (after redirects), and when its head arrived: set by the
    /// session as it reads the answer, `nil` until then.
    var sent: PreparedRequest?
    var firstByte: Tick?
    /// The connection that carried it, when the transport says (see ``ConnectionFacts``).
    var connection: ConnectionUse?
    /// Creates a response.
    public init(status: HTTPResponse.Status, headers: HTTPFields, body: ByteStream, isContentDecoded: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.isContentDecoded = isContentDecoded
    }
}

/// Which HTTP versions a request may use.
public enum HTTPVersionPolicy: Sendable, Hashable {
    /// HTTP/2 when the server chooses it through ALPN on TLS, else HTTP/1.1.
    case automatic
    /// HTTP/1.1 only.
    case http1Only
}
