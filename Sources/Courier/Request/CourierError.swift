public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The one error type Courier throws.
///
/// Like `HTTPClientError` in AsyncHTTPClient it is a struct over a private code enum, so new codes can be
/// added without breaking anyone who switches on ``code``. Compare codes, not descriptions:
///
/// ```swift
/// do { _ = try await session.send(Request<Data>.get("/slow")) }
/// catch let error as CourierError where error.code == .timeout { … }
/// ```
public struct CourierError: Error, Sendable, CustomStringConvertible {
    /// A stable identifier of what went wrong; its ``rawValue`` never changes once published.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case invalidURL, invalidHeader, invalidParameter, encoding, fileAccess
            case timeout, cancelled, connectionFailed, connectionClosed, connectionReset, tls
            case invalidResponse, httpStatus, validation, decoding, bodyTooLarge, decompression
            case redirectLoop, tooManyRedirects, ignored, sessionClosed, transport
            case tooFrequent, offline, batchFailed, chainFailed, cacheMiss
            case rangeMismatch, integrity, destinationExists, destinationBusy, diskFull, invalidState
            case compressionTarget, database, authenticationFailed, unreadableBody, webSocket
        }
        private let base: Base

        /// The stable text of the code, for logs and exit messages.
        public var rawValue: String { base.rawValue }
        /// The same as ``rawValue``.
        public var description: String { base.rawValue }

        /// A URL could not be parsed, has no host, or uses a scheme other than http/https.
        public static let invalidURL = Code(base: .invalidURL)
        /// A header name or value holds bytes that could split the request (CR, LF, NUL, other controls).
        public static let invalidHeader = Code(base: .invalidHeader)
        /// A parameter could not be encoded where the request asked for it.
        public static let invalidParameter = Code(base: .invalidParameter)
        /// The request body could not be encoded (for example an `Encodable` threw).
        public static let encoding = Code(base: .encoding)
        /// A file could not be opened, read or written: a cache entry, a download's destination or record, a
        /// cookie jar. A request body that cannot be read is ``unreadableBody``.
        public static let fileAccess = Code(base: .fileAccess)
        /// A request body's source could not be opened or read: a file named as the body (or a multipart part,
        /// or an upload) that is missing, not readable, or fails while it is read. It is the input that failed,
        /// not the output, so the CLI tells it as curl's read error (26).
        public static let unreadableBody = Code(base: .unreadableBody)
        /// A connect, read-idle or total timeout elapsed; ``CourierError/timeoutKind`` says which.
        public static let timeout = Code(base: .timeout)
        /// The calling task was cancelled, or the request was cancelled explicitly.
        public static let cancelled = Code(base: .cancelled)
        /// No connection could be made (refused, unreachable, name not resolved).
        public static let connectionFailed = Code(base: .connectionFailed)
        /// The server closed the connection (FIN) before the response was complete.
        public static let connectionClosed = Code(base: .connectionClosed)
        /// The connection was reset (RST) by the peer.
        public static let connectionReset = Code(base: .connectionReset)
        /// The TLS handshake or the TLS stream failed.
        public static let tls = Code(base: .tls)
        /// The server sent bytes that are not valid HTTP (bad framing, bad chunking, oversized head).
        public static let invalidResponse = Code(base: .invalidResponse)
        /// A status validator rejected the status code; ``CourierError/status`` and ``CourierError/bodyPreview`` say more.
        public static let httpStatus = Code(base: .httpStatus)
        /// A response validator rejected the response; ``CourierError/keyPath`` names the offending key when known.
        public static let validation = Code(base: .validation)
        /// The body could not be decoded into the requested type.
        public static let decoding = Code(base: .decoding)
        /// The response body exceeded the configured size limit (checked while streaming).
        public static let bodyTooLarge = Code(base: .bodyTooLarge)
        /// A compressed body was corrupt, truncated, or exceeded the decompression size or ratio limit.
        public static let decompression = Code(base: .decompression)
        /// A redirect led back to a URL already visited.
        public static let redirectLoop = Code(base: .redirectLoop)
        /// More redirects than the policy allows.
        public static let tooManyRedirects = Code(base: .tooManyRedirects)
        /// A validator chose to ignore the response; the request has no result.
        public static let ignored = Code(base: .ignored)
        /// The session was shut down before or while the request ran.
        public static let sessionClosed = Code(base: .sessionClosed)
        /// Any other failure of the transport; ``CourierError/underlying`` holds the original error.
        public static let transport = Code(base: .transport)
        /// A rate limit refused the request (HLNetworking's "requests sent too fast"); ``CourierError/retryAfter``
        /// says in how many seconds the next one is allowed.
        public static let tooFrequent = Code(base: .tooFrequent)
        /// The network is unreachable from this machine (no route to any network).
        public static let offline = Code(base: .offline)
        /// A request with ``CachePolicy/cacheOnly`` (or `only-if-cached`) found nothing usable in the cache.
        public static let cacheMiss = Code(base: .cacheMiss)
        /// A batch member failed in fail-fast mode; ``CourierError/step`` is its index and ``CourierError/underlying``
        /// its error.
        public static let batchFailed = Code(base: .batchFailed)
        /// A chain step failed; ``CourierError/step`` is its index, ``CourierError/stepName`` its name and
        /// ``CourierError/underlying`` its error.
        public static let chainFailed = Code(base: .chainFailed)
        /// A 206 answer whose `Content-Range` does not match the bytes asked for; the partial download is left as it was.
        public static let rangeMismatch = Code(base: .rangeMismatch)
        /// A finished download has the wrong length or checksum; the destination is left untouched.
        public static let integrity = Code(base: .integrity)
        /// The destination file exists and overwriting was not asked for.
        public static let destinationExists = Code(base: .destinationExists)
        /// Another download, in this process or another, is writing the same destination: its part file is
        /// locked for as long as that transfer runs. Nothing of it was touched.
        public static let destinationBusy = Code(base: .destinationBusy)
        /// The disk (or the process's file size limit) is full; the partial download is kept.
        public static let diskFull = Code(base: .diskFull)
        /// An operation that does not apply in the current state, such as pausing a completed download.
        public static let invalidState = Code(base: .invalidState)
        /// No compression setting brings a body under the target size it was given, or the body cannot be
        /// measured for one (a stream that can be read only once).
        public static let compressionTarget = Code(base: .compressionTarget)
        /// A database a shared store or queue lives in refused or failed: a wrong address or password, a table
        /// written by a newer Courier, a server that is down (see the `CourierPostgres` library).
        public static let database = Code(base: .database)
        /// The server refused the call's credential and no fresh one could be used: the ``Authenticator``'s
        /// refresh threw (``CourierError/underlying`` holds its error), fresh credentials were refused again and
        /// again, or the body could not be sent a second time.
        public static let authenticationFailed = Code(base: .authenticationFailed)
        /// A WebSocket connection failed on the protocol: the server broke RFC 6455 (a masked frame, reserved
        /// bits, a bad close code, text that is not UTF-8, …) or sent a message past the limits. Courier closed it
        /// with ``CourierError/webSocketCloseCode``.
        public static let webSocket = Code(base: .webSocket)
    }

    /// Which timeout elapsed, for ``Code/timeout`` errors.
    public enum TimeoutKind: String, Sendable {
        /// Establishing the connection took too long.
        case connect
        /// No byte arrived for longer than the read-idle timeout.
        case readIdle
        /// The connection took the request body slower than 64 KiB per read-idle time: the server stopped
        /// reading an upload (or reads it slower than that).
        case writeIdle
        /// The whole request (including redirects and the body) took too long.
        case total
    }

    /// What went wrong, as a stable code.
    public let code: Code
    /// A human-readable explanation; secrets are never included.
    public internal(set) var message: String
    /// The HTTP status, for ``Code/httpStatus`` (and validation errors raised on a response).
    public var status: HTTPResponse.Status?
    /// The first bytes of the response body as text, for ``Code/httpStatus``; redacted and truncated.
    public var bodyPreview: String?
    /// The offending key path (`data.items[2].id`) for ``Code/validation``.
    public var keyPath: String?
    /// Which timeout elapsed, for ``Code/timeout``.
    public var timeoutKind: TimeoutKind?
    /// The error Courier translated, when there was one.
    public var underlying: (any Error)?
    /// A text fit to show a user, from ``Configuration/userMessages`` (HLNetworking's tips); `nil` when none fits.
    public var userMessage: String?
    /// The index of the failing batch member or chain step.
    public var step: Int?
    /// The name of the failing chain step.
    public var stepName: String?
    /// Where a failed download keeps the bytes it got (WYNetwork hands the path back): resume it with
    /// ``DownloadManager/resume(_:)`` or remove it with ``DownloadManager/cancel(_:)``. When every byte arrived
    /// (verified, when the download has a checksum) but the destination could not take the file, it is the whole
    /// file, for the caller to move (RBEFireworks' `downloadedContentPath`). `nil` when nothing was kept.
    public var partialFile: URL? {
        get { partialFilePath.map { URL(filePath: $0) } }
        set { partialFilePath = newValue?.path(percentEncoded: false) }
    }
    /// ``partialFile``'s path: a `String` keeps the error's layout one the compiler can see, so every async frame
    /// that holds an error allocates nothing for it (a `URL` field cost each of them a task allocation).
    private var partialFilePath: String?
    var retryAfterValue: String?
    /// The close code Courier ended a WebSocket connection with, for ``Code/webSocket`` errors and a ping left
    /// unanswered.
    public var webSocketCloseCode: WebSocketCloseCode?
    /// Whether the transport found the pooled connection it picked already closed by the server before any of
    /// the answer arrived: the request never reached the server, so an idempotent one goes again at once, once,
    /// whatever the retry rule says. A ``Transport`` of your own sets it where its client reports such a
    /// connection; both of Courier's transports do.
    public var isStaleConnection = false
    /// Whether the server said it did not process the request: an HTTP/2 stream above the last one of its
    /// `GOAWAY`, or one it refused (`REFUSED_STREAM`, RFC 9113 §8.7). Such a request goes again on a new
    /// connection, whatever its method, up to 10 times, whatever the retry rule says. A ``Transport`` of
    /// your own sets it where its client reports such a stream; Courier's AsyncHTTPClient transport does.
    public var isUnprocessed = false
    /// Whether a ``Code/connectionFailed`` failure happened before any connection was tried: the host name did
    /// not resolve (a CLI tells it apart, as curl's exit code 6 does).
    public var isUnresolvedHost = false
    /// Whether a ``Code/tls`` failure is the server's certificate failing the check (untrusted, expired, or for
    /// another host) rather than the handshake itself (a CLI tells it apart, as curl's exit code 60 does).
    public var isUntrustedCertificate = false
    /// Whether a ``Code/connectionFailed`` failure is a proxy's refusal: it wants credentials that were not given,
    /// refused the ones given, or would not reach the host (a CLI tells it apart, as curl's exit code 97 does).
    /// The message names the proxy, never its credentials.
    public var isProxyRefusal = false

    /// Creates an error; prefer the static factories such as ``invalidURL(_:reason:)``.
    public init(code: Code, message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// `code: message`, one line, suitable for a CLI's stderr.
    public var description: String { "\(code.rawValue): \(message)" }
}

extension CourierError {
    /// A malformed URL; the offending string is quoted, with any password and sensitive query value hidden.
    /// Without a `reason`, says what is wrong with the port when that is the problem.
    public static func invalidURL(_ string: String, reason: String? = nil) -> CourierError {
        let reason = reason ?? URL(string: string)?.portProblem ?? "not a valid http(s) URL"
        return CourierError(
            code: .invalidURL,
            message: "\(reason): \"\(Self.printable(Redactor.standard.redact(urlText: string)))\""
        )
    }

    /// A header that may not be sent; the name is quoted, the value never is (it may be a secret).
    public static func invalidHeader(name: String, reason: String) -> CourierError {
        CourierError(code: .invalidHeader, message: "header \"\(Self.printable(name))\" \(reason)")
    }

    /// A timeout of the given kind.
    public static func timeout(_ kind: TimeoutKind, after duration: Duration? = nil, url: String? = nil) -> CourierError
    {
        var text = "\(kind.rawValue) timeout"
        if let duration { text += " of \(duration.formattedSeconds)" }
        text += " elapsed"
        if let url { text += " for \(url)" }
        var error = CourierError(code: .timeout, message: text)
        error.timeoutKind = kind
        return error
    }

    /// The request was cancelled.
    public static func cancelled(_ detail: String = "the request was cancelled") -> CourierError {
        CourierError(code: .cancelled, message: detail)
    }

    /// A rejected status code with a preview of the body.
    public static func httpStatus(
        _ status: HTTPResponse.Status,
        bodyPreview: String?,
        url: String? = nil
    ) -> CourierError {
        var text = "HTTP \(status.code)"
        if !status.reasonPhrase.isEmpty { text += " \(status.reasonPhrase)" }
        if let url { text += " from \(url)" }
        var error = CourierError(code: .httpStatus, message: text)
        error.status = status
        error.bodyPreview = bodyPreview
        return error
    }

    /// A validation failure, optionally naming the key path it concerns.
    public static func validation(_ message: String, keyPath: String? = nil) -> CourierError {
        var error = CourierError(code: .validation, message: keyPath.map { "\(message) at \($0)" } ?? message)
        error.keyPath = keyPath
        return error
    }

    /// A `Content-Range` that does not match the request.
    static func rangeMismatch(_ detail: String) -> CourierError {
        CourierError(code: .rangeMismatch, message: printable(detail))
    }

    /// An exchange that ended without a response head (the connection closed, or the transport gave up, first).
    static func noResponse() -> CourierError {
        CourierError(code: .invalidResponse, message: "the exchange ended without a response")
    }

    /// The error of a failing batch member or chain step, wrapping `error` and naming the step.
    static func failedStep(_ code: Code, index: Int, name: String?, error: CourierError) -> CourierError {
        let label =
            name.map { "step \(index) (\(printable($0)))" } ?? "\(code == .batchFailed ? "request" : "step") \(index)"
        var wrapped = CourierError(code: code, message: "\(label) failed: \(error.description)", underlying: error)
        wrapped.step = index
        wrapped.stepName = name
        wrapped.status = error.status
        wrapped.userMessage = error.userMessage
        return wrapped
    }

    /// `error` itself when it is a ``CourierError``; a cancellation as ``Code/cancelled``; anything else wrapped
    /// as ``Code/transport``.
    package static func normalized(_ error: any Error) -> CourierError {
        if let error = error as? CourierError { return error }
        if error is CancellationError { return .cancelled() }
        return CourierError(code: .transport, message: "\(error)", underlying: error)
    }

    /// Replaces control characters so a hostile string cannot break a log line.
    package static func printable(_ string: String, limit: Int = 200) -> String {
        TerminalText.escaped(string, limit: limit)
    }
}

extension CourierError: Equatable {
    /// Two errors are equal when their code and message match; the underlying error is not compared.
    public static func == (lhs: CourierError, rhs: CourierError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number (also for the CLI, the benchmark and the tests).
    package var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// `1.5 s`, `250 ms`: the form every Courier message uses.
    package var formattedSeconds: String {
        let ms = seconds * 1000
        return ms < 1000 ? "\(Int(ms.rounded())) ms" : "\((ms / 1000).significantText(3)) s"
    }
}
