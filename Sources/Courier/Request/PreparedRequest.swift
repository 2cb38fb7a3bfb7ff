public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A request resolved to what goes on the wire: method, absolute URL, final headers and body, and how a
/// ``Transport`` sends it (timeouts, deadline, TLS policy, proxy, HTTP version).
///
/// Adapters receive and return these; transports send them; monitors and responses carry them. ``description`` and ``curlCommand``
/// redact credentials, so both are safe to log.
public struct PreparedRequest: Sendable {
    /// The method.
    public var method: HTTPRequest.Method {
        get { stored.fields.method }
        set { change { $0.method = newValue } }
    }
    /// The absolute URL.
    public var url: URL {
        get { stored.fields.url }
        set {
            change { fields in
                fields.url = newValue
                fields.facts = nil
            }
        }
    }
    /// The headers, including defaults and `Content-Type`.
    public var headers: HTTPFields {
        get { stored.fields.headers }
        set { change { $0.headers = newValue } }
    }
    /// The body.
    public var body: PreparedBody {
        get { stored.fields.body }
        set { change { $0.body = newValue } }
    }
    /// The tag of the ``Request`` this came from.
    public var tag: String? {
        get { stored.fields.tag }
        set { change { $0.tag = newValue } }
    }
    /// The userInfo of the ``Request`` this came from.
    public var userInfo: [String: any Sendable] {
        get { stored.fields.userInfo }
        set { change { $0.userInfo = newValue } }
    }

    /// Connect and read-idle timeouts: the session's with the request's own applied. ``deadline`` bounds the whole
    /// exchange.
    public var timeouts: Timeouts {
        get { stored.fields.timeouts }
        set { change { $0.timeouts = newValue } }
    }
    /// When the whole exchange, body included, must be over: the call's start plus its total timeout.
    public var deadline: ContinuousClock.Instant {
        get { stored.fields.deadline.instant }
        set { change { $0.deadline = Tick(newValue) } }
    }
    /// How the server's certificate is checked, for `https` URLs: the session's policy for ``url``'s host, chosen
    /// again after each redirect.
    public var tls: TLSPolicy {
        get { stored.fields.tls }
        set { change { $0.tls = newValue } }
    }
    /// The proxy to go through, or `nil` to connect directly: the session's for ``url``, chosen again after each
    /// redirect.
    public var proxy: Proxy? {
        get { stored.fields.proxy }
        set { change { $0.proxy = newValue } }
    }
    /// Whether HTTP/2 may be negotiated.
    public var httpVersion: HTTPVersionPolicy {
        get { stored.fields.httpVersion }
        set { change { $0.httpVersion = newValue } }
    }

    /// The fields, in one immutable object that copies share: a prepared request is copied into every step that
    /// keeps it (the pool, the exchange, the transport, the response, each monitor), and each copy retains one
    /// reference instead of one per field. Changing a field makes a new object.
    private var stored: Stored

    private final class Stored: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private struct Fields: Sendable {
        var method: HTTPRequest.Method
        var url: URL
        var headers: HTTPFields
        var body: PreparedBody
        var tag: String?
        var userInfo: [String: any Sendable]
        var facts: URLFacts?
        var timeouts: Timeouts
        var deadline: Tick
        var tls: TLSPolicy
        var proxy: Proxy?
        var httpVersion: HTTPVersionPolicy
    }

    /// Facts of ``url`` worked out before it came here, or `nil` (see `URLFacts`).
    var knownFacts: URLFacts? { stored.fields.facts }

    /// Facts of ``url``: the ones known, else worked out now.
    var urlFacts: URLFacts { stored.fields.facts ?? URLFacts(url) }

    /// Whether ``url`` is `https`.
    var isHTTPS: Bool { stored.fields.facts?.isHTTPS ?? url.isHTTPS }

    /// ``deadline`` as the request path keeps it (see `Tick`).
    var deadlineTick: Tick { stored.fields.deadline }

    private mutating func change(_ update: (inout Fields) -> Void) {
        var fields = stored.fields
        update(&fields)
        stored = Stored(fields)
    }

    /// Creates a prepared request; sessions build these from a ``Request``. To call a ``Transport`` directly,
    /// give it the timeouts and the deadline it should keep: by default the exchange must be over within
    /// `timeouts.total` from now.
    public init(
        method: HTTPRequest.Method,
        url: URL,
        headers: HTTPFields = [:],
        body: PreparedBody = .empty,
        tag: String? = nil,
        userInfo: [String: any Sendable] = [:],
        timeouts: Timeouts = Timeouts(),
        deadline: ContinuousClock.Instant? = nil,
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
            tag: tag,
            userInfo: userInfo,
            timeouts: timeouts,
            deadline: deadline.map(Tick.init) ?? .now + timeouts.total,
            tls: tls,
            proxy: proxy,
            httpVersion: httpVersion
        )
    }

    /// A prepared request whose URL's `facts` are known already.
    init(
        method: HTTPRequest.Method,
        url: URL,
        facts: URLFacts?,
        headers: HTTPFields,
        body: PreparedBody,
        tag: String?,
        userInfo: [String: any Sendable],
        timeouts: Timeouts,
        deadline: Tick,
        tls: TLSPolicy,
        proxy: Proxy?,
        httpVersion: HTTPVersionPolicy
    ) {
        stored = Stored(
            Fields(
                method: method,
                url: url,
                headers: headers,
                body: body,
                tag: tag,
                userInfo: userInfo,
                facts: facts,
                timeouts: timeouts,
                deadline: deadline,
                tls: tls,
                proxy: proxy,
                httpVersion: httpVersion
            )
        )
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
            let text =
                String(data: data, encoding: .utf8).map { redactor.redact(body: $0) }
                ?? "<\(data.count) bytes of binary data>"
            // --data-raw, not --data-binary: a body that starts with `@` is those bytes, not a file curl should read.
            parts.append("--data-raw " + Self.quote(text))
        case .file(let url, _): parts.append("--data-binary " + Self.quote("@" + url.path(percentEncoded: false)))
        case .stream: parts.append("--data-binary @-")
        }
        parts.append(Self.quote(redactor.redact(url: url)))
        return parts.joined(separator: " ")
    }

    /// Single-quotes for a POSIX shell.
    private static func quote(_ text: String) -> String {
        "'" + text.replacing("'", with: "'\\''") + "'"
    }
}
