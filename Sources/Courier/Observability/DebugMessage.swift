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

    /// Creates a message.
    public init(
        originalRequest: PreparedRequest,
        currentRequest: PreparedRequest,
        response: ResponseBody?,
        error: CourierError?,
        timing: Timing,
        attempts: Int,
        redirects: [RedirectHop] = []
    ) {
        self.originalRequest = originalRequest
        self.currentRequest = currentRequest
        self.response = response
        self.error = error
        self.timing = timing
        self.attempts = attempts
        self.redirects = redirects
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
        if let error { lines.append("  error: \(error)") }
        let firstByte = timing.timeToFirstByte.map { ", first byte after \($0)" } ?? ""
        lines.append("  took \(timing.total)\(firstByte), \(attempts) attempt\(attempts == 1 ? "" : "s")")
        return lines.joined(separator: "\n")
    }
}
