import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Everything about one finished request in one value (HLNetworking's `HLDebugMessage`): the request as first
/// prepared and as last sent (after redirects), the response or the error, the timing, the attempts and the
/// redirects followed on the way.
/// ``EventMonitor/didFinish(with:)`` receives it; its ``description`` is a readable report with credentials redacted.
public struct DebugMessage: Sendable, CustomStringConvertible {
    /// The request after preparation (adapters, defaults), before any redirect.
    public var originalRequest: PreparedRequest
    /// The request last sent: after redirects, with the headers that went out.
    public var currentRequest: PreparedRequest
    /// The final response, when one arrived.
    public var response: ResponseBody?
    /// The failure, when the request failed.
    public var error: CourierError?
    /// When it started, when the first byte came, when it ended.
    public var timing: Timing
    /// How many times it was sent (1 without retries).
    public var attempts: Int
    /// The redirects the call followed, in order (empty when it followed none).
    public var redirects: [RedirectHop]
    /// For a WebSocket call (``Session/webSocket(_:options:_:)``), the messages sent and received on its
    /// connections, in order: at most 10,000, each cut to 64 KiB and all to 4 MiB.
    public var webSocketMessages: [WebSocketMessageRecord]
    /// How many of a WebSocket call's messages were past those bounds, and left out of ``webSocketMessages``.
    public var webSocketMessagesLeftOut: Int

    /// Creates a message.
    public init(
        originalRequest: PreparedRequest,
        currentRequest: PreparedRequest,
        response: ResponseBody?,
        error: CourierError?,
        timing: Timing,
        attempts: Int,
        redirects: [RedirectHop] = [],
        webSocketMessages: [WebSocketMessageRecord] = [],
        webSocketMessagesLeftOut: Int = 0
    ) {
        self.originalRequest = originalRequest
        self.currentRequest = currentRequest
        self.response = response
        self.error = error
        self.timing = timing
        self.attempts = attempts
        self.redirects = redirects
        self.webSocketMessages = webSocketMessages
        self.webSocketMessagesLeftOut = webSocketMessagesLeftOut
    }

    /// A multi-line report, with credentials and sensitive parameters hidden by ``Redactor/standard``.
    public var description: String {
        let redactor = Redactor.standard
        var lines = ["\(originalRequest.method.rawValue) \(redactor.redact(url: originalRequest.url))"]
        for hop in redirects {
            lines.append("  \(hop.status.code) → \(redactor.redact(url: hop.location)) after \(hop.timing.total)")
        }
        if currentRequest.url != originalRequest.url || currentRequest.method != originalRequest.method {
            lines.append("  sent as: \(currentRequest.method.rawValue) \(redactor.redact(url: currentRequest.url))")
        }
        for field in currentRequest.headers { lines.append("  > \(field.name): \(redactor.redact(field))") }
        if let response {
            lines.append("  < \(response.status.code) \(response.status.reasonPhrase), \(response.data.count) bytes")
        }
        if !webSocketMessages.isEmpty || webSocketMessagesLeftOut > 0 {
            let counts = Dictionary(grouping: webSocketMessages, by: \.direction).mapValues(\.count)
            let leftOut = webSocketMessagesLeftOut > 0 ? " (\(webSocketMessagesLeftOut) more not kept)" : ""
            lines.append("  messages: \(counts[.sent] ?? 0) sent, \(counts[.received] ?? 0) received\(leftOut)")
        }
        if let error { lines.append("  error: \(error)") }
        let firstByte = timing.timeToFirstByte.map { ", first byte after \($0)" } ?? ""
        lines.append("  took \(timing.total)\(firstByte), \(attempts) attempt\(attempts == 1 ? "" : "s")")
        return lines.joined(separator: "\n")
    }
}
