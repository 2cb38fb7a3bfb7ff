public import Foundation
public import HTTPTypes

/// A request resolved to what goes on the wire: method, absolute URL, final headers and body.
///
/// Adapters receive and return these; monitors and responses carry them. ``description`` and ``curlCommand``
/// redact credentials, so both are safe to log.
public struct PreparedRequest: Sendable {
    /// The method.
    public var method: HTTPRequest.Method
    /// The absolute URL.
    public var url: URL
    /// The headers, including defaults and `Content-Type`.
    public var headers: HTTPFields
    /// The body.
    public var body: PreparedBody
    /// The tag of the ``Request`` this came from.
    public var tag: String?
    /// The userInfo of the ``Request`` this came from.
    public var userInfo: [String: any Sendable]

    /// Creates a prepared request; sessions build these from a ``Request``.
    public init(method: HTTPRequest.Method, url: URL, headers: HTTPFields = [:], body: PreparedBody = .empty,
                tag: String? = nil, userInfo: [String: any Sendable] = [:]) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.tag = tag
        self.userInfo = userInfo
    }

    /// Whether the method is idempotent (RFC 9110 §9.2.2), so a retry cannot do harm.
    public var isIdempotent: Bool {
        [.get, .head, .options, .put, .delete, .trace].contains(method)
    }
}

extension PreparedRequest: CustomStringConvertible {
    /// `GET https://host/path?query` with sensitive query values redacted.
    public var description: String { "\(method.rawValue) \(Redactor.standard.redact(url: url))" }

    /// A cURL command that repeats this request, using the standard redactor; see ``curlCommand(redactor:)``.
    public var curlCommand: String { curlCommand(redactor: .standard) }

    /// A cURL command that repeats this request. Sensitive headers and query values are replaced by the
    /// redactor; pass ``Redactor/none`` to export them as they are (never log that).
    public func curlCommand(redactor: Redactor) -> String {
        var parts = ["curl"]
        if method == .head { parts.append("--head") } else if method != .get { parts.append("-X \(method.rawValue)") }
        for field in headers {
            parts.append("-H " + Self.quote("\(field.name.rawName): \(redactor.redact(field))"))
        }
        switch body {
        case .empty: break
        case .bytes(let data):
            let text = String(data: data, encoding: .utf8).map { redactor.redact(body: $0) } ?? "<\(data.count) bytes of binary data>"
            parts.append("--data-binary " + Self.quote(text))
        case .file(let url, _): parts.append("--data-binary " + Self.quote("@" + url.path(percentEncoded: false)))
        case .stream: parts.append("--data-binary @-")
        }
        parts.append(Self.quote(redactor.redact(url: url)))
        return parts.joined(separator: " ")
    }

    /// Single-quotes for a POSIX shell.
    private static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
