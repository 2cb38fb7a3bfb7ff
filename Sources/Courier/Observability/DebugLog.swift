import Foundation
import HTTPTypes
import Logging

/// The debug messages of one request (HLNetworking's debug message, XZNetworking's detail log): request line,
/// headers and body preview, then status, headers, body preview and duration. Everything passes the
/// configuration's ``Redactor`` first.
struct DebugLog {
    private let logger: Logger
    private let redactor: Redactor
    private let enabled: Bool
    private static let previewLimit = 1024

    init(configuration: Configuration) {
        var logger = configuration.logger
        if configuration.debugLogging { logger.logLevel = min(logger.logLevel, .debug) }
        self.logger = logger
        self.redactor = configuration.redactor
        self.enabled = configuration.debugLogging || logger.logLevel <= .debug
    }

    func request(_ request: PreparedRequest) {
        guard enabled else { return }
        var lines = ["→ \(request.method.rawValue) \(redactor.redact(url: request.url))"]
        if !request.headers.isEmpty { lines.append(redactor.redact(request.headers)) }
        switch request.body {
        case .empty: break
        case .bytes(let data):
            lines.append(BodyPreview.text(data, limit: Self.previewLimit).map(redactor.redact(body:)) ?? "")
        case .file(let url, let length): lines.append("<file \(url.lastPathComponent), \(length) bytes>")
        case .stream(_, let length): lines.append("<stream\(length.map { ", \($0) bytes" } ?? "")>")
        }
        logger.debug("\(lines.joined(separator: "\n"))")
    }

    /// Logs a response read whole; `since` is when the request started (the clock is read only when logging).
    func response(_ body: ResponseBody, for request: PreparedRequest, since start: Tick) {
        guard enabled else { return }
        var lines = head(body.status, body.headers, for: request, since: start)
        if let preview = BodyPreview.text(body.data, limit: Self.previewLimit) {
            lines.append(redactor.redact(body: preview))
        }
        logger.debug("\(lines.joined(separator: "\n"))")
    }

    /// The head of a streamed answer, whose body its caller reads (``Session/stream(_:)``).
    func responseHead(
        _ status: HTTPResponse.Status,
        _ headers: HTTPFields,
        for request: PreparedRequest,
        since start: Tick
    ) {
        guard enabled else { return }
        logger.debug(
            "\((head(status, headers, for: request, since: start) + ["<body streamed to the caller>"]).joined(separator: "\n"))"
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
        guard enabled else { return }
        logger.debug("↪ \(status.code) \(redactor.redact(url: request.url)) → \(redactor.redact(url: url))")
    }

    func retry(_ request: PreparedRequest, attempt: Int, delay: Duration, error: CourierError) {
        guard enabled else { return }
        logger.debug(
            "retrying \(request.method.rawValue) \(redactor.redact(url: request.url)) (attempt \(attempt + 1)) in \(delay.formattedSeconds) after \(error.code)"
        )
    }

    func failure(_ request: PreparedRequest, _ error: CourierError, duration: Duration) {
        guard enabled else { return }
        logger.debug(
            "✗ \(request.method.rawValue) \(redactor.redact(url: request.url)) failed in \(duration.formattedSeconds): \(error)"
        )
    }
}
