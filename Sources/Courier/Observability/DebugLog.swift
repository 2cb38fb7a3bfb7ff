import HTTPTypes
import Logging
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The numbers calls are told apart by in the log (`courier.request.id`), handed out only while debug logging is on.
private let callIDs = Atomic<UInt64>(1)

/// The debug messages of one request (HLNetworking's debug message, XZNetworking's detail log): request line,
/// headers and body preview, then status, headers, body preview and duration. Everything passes the
/// configuration's ``Redactor`` first.
///
/// Each message carries the call's facts as structured metadata, named as ``TelemetryNames`` names them where
/// OpenTelemetry has a name: `courier.request.id` (one per call, ``forCall()``), `http.request.method`,
/// `server.address`, `url.full` (redacted), and where known `http.response.status_code`, `courier.attempt` and
/// `courier.duration` (seconds), so a log backend can filter and join on them; the message itself says what
/// happened.
struct DebugLog {
    private let logger: Logger
    private let redactor: Redactor
    /// The call this log's messages belong to; 0 for a session's shared log (see ``forCall()``).
    private var callID: UInt64 = 0
    private static let previewLimit = 1024

    /// The session's log, or nil while debug logging is off (neither ``Configuration/debugLogging`` nor a logger at
    /// `.debug`): a call then holds no log and pays nothing for one.
    init?(configuration: Configuration) {
        var logger = configuration.logger
        if configuration.debugLogging { logger.logLevel = min(logger.logLevel, .debug) }
        guard logger.logLevel <= .debug else { return nil }
        self.logger = logger
        self.redactor = configuration.redactor
    }

    /// This log for one call, with a number of its own in every message's metadata.
    func forCall() -> DebugLog {
        var log = self
        log.callID = callIDs.wrappingAdd(1, ordering: .relaxed).oldValue
        return log
    }

    /// The call's facts for a message about `request`.
    private func metadata(
        _ request: PreparedRequest,
        status: HTTPResponse.Status? = nil,
        attempt: Int? = nil,
        duration: Duration? = nil
    ) -> Logger.Metadata {
        typealias Attribute = TelemetryNames.Attribute
        var metadata: Logger.Metadata = [
            "courier.request.id": "\(callID)",
            Attribute.requestMethod: "\(request.method.rawValue)",
            Attribute.urlFull: "\(redactor.redact(url: request.url))",
        ]
        if let host = request.url.host(percentEncoded: false) { metadata[Attribute.serverAddress] = "\(host)" }
        if let status { metadata[Attribute.responseStatusCode] = "\(status.code)" }
        if let attempt { metadata["courier.attempt"] = "\(attempt)" }
        if let duration { metadata["courier.duration"] = "\(duration.formattedSeconds)" }
        return metadata
    }

    func request(_ request: PreparedRequest) {
        var lines = ["→ \(request.method.rawValue) \(redactor.redact(url: request.url))"]
        if !request.headers.isEmpty { lines.append(redactor.redact(request.headers)) }
        switch request.body {
        case .empty: break
        case .bytes(let data):
            lines.append(BodyPreview.text(data, limit: Self.previewLimit).map(redactor.redact(body:)) ?? "")
        case .file(let url, let length): lines.append("<file \(url.lastPathComponent), \(length) bytes>")
        case .stream(_, let length): lines.append("<stream\(length.map { ", \($0) bytes" } ?? "")>")
        }
        logger.debug("\(lines.joined(separator: "\n"))", metadata: metadata(request))
    }

    /// Logs a response read whole; `since` is when the request started (the clock is read only when logging).
    func response(_ body: ResponseBody, for request: PreparedRequest, since start: Tick) {
        var lines = head(body.status, body.headers, for: request, since: start)
        if let preview = BodyPreview.text(body.data, limit: Self.previewLimit) {
            lines.append(redactor.redact(body: preview))
        }
        logger.debug(
            "\(lines.joined(separator: "\n"))",
            metadata: metadata(request, status: body.status, duration: start.duration(to: .now))
        )
    }

    /// The head of a streamed answer, whose body its caller reads (``Session/stream(_:)``).
    func responseHead(
        _ status: HTTPResponse.Status,
        _ headers: HTTPFields,
        for request: PreparedRequest,
        since start: Tick
    ) {
        logger.debug(
            "\((head(status, headers, for: request, since: start) + ["<body streamed to the caller>"]).joined(separator: "\n"))",
            metadata: metadata(request, status: status, duration: start.duration(to: .now))
        )
    }

    private func head(
        _ status: HTTPResponse.Status,
        _ headers: HTTPFields,
        for request: PreparedRequest,
        since start: Tick
    ) -> [String] {
        let duration = start.duration(to: .now)
        var lines = [
            "← \(status.code) \(request.method.rawValue) \(redactor.redact(url: request.url)) in \(duration.formattedSeconds)"
        ]
        for field in headers { lines.append("\(field.name.rawName): \(TerminalText.escaped(redactor.redact(field)))") }
        return lines
    }

    func redirect(from request: PreparedRequest, status: HTTPResponse.Status, to url: URL) {
        var metadata = metadata(request, status: status)
        metadata["courier.redirect.location"] = "\(redactor.redact(url: url))"
        logger.debug("↪ redirected", metadata: metadata)
    }

    func retry(_ request: PreparedRequest, attempt: Int, delay: Duration, error: CourierError) {
        var metadata = metadata(request, status: error.status, attempt: attempt + 1)
        metadata["courier.retry.delay"] = "\(delay.formattedSeconds)"
        metadata[TelemetryNames.Attribute.errorType] =
            "\(TelemetryNames.errorType(status: error.status, failure: error) ?? "")"
        logger.debug("retrying", metadata: metadata)
    }

    func failure(_ request: PreparedRequest, _ error: CourierError, duration: Duration) {
        var metadata = metadata(request, status: error.status, duration: duration)
        metadata[TelemetryNames.Attribute.errorType] =
            "\(TelemetryNames.errorType(status: error.status, failure: error) ?? "")"
        logger.debug("✗ failed: \(error)", metadata: metadata)
    }
}
