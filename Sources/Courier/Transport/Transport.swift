public import Foundation
public import HTTPTypes

/// The only code that touches sockets. A transport sends one request and returns the response head with a
/// body stream; it does not follow redirects, decompress, retry or validate — the session does those the
/// same way for every transport.
///
/// Courier ships ``AsyncHTTPClientTransport`` (the default), ``URLSessionTransport``, and, in
/// `CourierTesting`, a stub transport for unit tests.
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
    func send(_ request: TransportRequest, cancellation: TransportCancellation) async throws -> TransportResponse

    /// Releases connections and threads. The session calls it once, when it shuts down.
    func shutdown() async throws
}

extension Transport {
    /// Sends `request` through ``send(_:cancellation:)``, cancelled when the calling task is: while the head is
    /// awaited and while the body is read. For calling a transport directly; the session hands it its own
    /// cancellation.
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
}

/// What a transport sends.
public struct TransportRequest: Sendable {
    /// The method.
    public var method: HTTPRequest.Method
    /// The absolute URL.
    public var url: URL {
        get { storedURL }
        set {
            storedURL = newValue
            facts = nil
        }
    }
    private var storedURL: URL
    /// Facts of ``url`` worked out before, or `nil` (see `URLFacts`).
    private var facts: URLFacts?
    /// Whether ``url`` is `https`.
    var isHTTPS: Bool { facts?.isHTTPS ?? storedURL.isHTTPS }
    /// The headers, validated.
    public var headers: HTTPFields
    /// The body.
    public var body: PreparedBody
    /// Connect and read-idle timeouts; ``deadline`` bounds the whole exchange.
    public var timeouts: Timeouts
    /// When the whole exchange, body included, must be over.
    public var deadline: ContinuousClock.Instant {
        get { deadlineTick.instant }
        set { deadlineTick = Tick(newValue) }
    }
    /// ``deadline`` as the request path keeps it (see `Tick`).
    var deadlineTick: Tick
    /// How the server's certificate is checked, for `https` URLs.
    public var tls: TLSPolicy
    /// The proxy to go through, or `nil` to connect directly.
    public var proxy: Proxy?
    /// Whether HTTP/2 may be negotiated.
    public var httpVersion: HTTPVersionPolicy

    /// Creates a transport request.
    public init(
        method: HTTPRequest.Method,
        url: URL,
        headers: HTTPFields,
        body: PreparedBody,
        timeouts: Timeouts,
        deadline: ContinuousClock.Instant,
        tls: TLSPolicy = .standard,
        proxy: Proxy? = nil,
        httpVersion: HTTPVersionPolicy = .automatic
    ) {
        self.init(
            method: method,
            url: url,
            facts: nil,
            headers: headers,
            body: body,
            timeouts: timeouts,
            deadline: Tick(deadline),
            tls: tls,
            proxy: proxy,
            httpVersion: httpVersion
        )
    }

    init(
        method: HTTPRequest.Method,
        url: URL,
        facts: URLFacts?,
        headers: HTTPFields,
        body: PreparedBody,
        timeouts: Timeouts,
        deadline: Tick,
        tls: TLSPolicy,
        proxy: Proxy?,
        httpVersion: HTTPVersionPolicy
    ) {
        self.method = method
        storedURL = url
        self.facts = facts
        self.headers = headers
        self.body = body
        self.timeouts = timeouts
        deadlineTick = deadline
        self.tls = tls
        self.proxy = proxy
        self.httpVersion = httpVersion
    }
}

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
