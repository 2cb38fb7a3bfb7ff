#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A proxy server: HTTP (with optional Basic credentials) or SOCKS5.
///
/// Through an HTTP proxy, every request goes through a `CONNECT` tunnel, `http` ones included (that is how
/// AsyncHTTPClient uses proxies), so the proxy never sees the request itself, only the host and port it connects to.
///
/// ```swift
/// let proxy = try Proxy(url: "http://user:secret@proxy.internal:3128")
/// ```
public struct Proxy: Sendable, Hashable, CustomStringConvertible {
    /// The protocol spoken to the proxy.
    public enum Kind: String, Sendable, Hashable {
        /// An HTTP proxy, reached with `CONNECT`.
        case http
        /// A SOCKS5 proxy, with or without a user name and password.
        case socks5
    }

    /// The protocol.
    public var kind: Kind
    /// The proxy's host.
    public var host: String
    /// The proxy's port.
    public var port: Int
    /// Credentials: Basic `Proxy-Authorization` for an HTTP proxy, username/password authentication (RFC 1929)
    /// for a SOCKS5 proxy.
    public var credentials: Credentials?

    /// A user name and password.
    public struct Credentials: Sendable, Hashable {
        /// The user name.
        public var username: String
        /// The password.
        public var password: String

        /// Creates credentials.
        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }
    }

    /// Creates a proxy.
    public init(kind: Kind, host: String, port: Int, credentials: Credentials? = nil) {
        self.kind = kind
        self.host = host
        self.port = port
        self.credentials = credentials
    }

    /// An HTTP proxy.
    public static func http(host: String, port: Int = 3128, credentials: Credentials? = nil) -> Proxy {
        Proxy(kind: .http, host: host, port: port, credentials: credentials)
    }

    /// A SOCKS5 proxy.
    public static func socks5(host: String, port: Int = 1080, credentials: Credentials? = nil) -> Proxy {
        Proxy(kind: .socks5, host: host, port: port, credentials: credentials)
    }

    /// A proxy from a URL as curl and the `*_proxy` variables spell it: `http://[user:password@]host[:port]`,
    /// `socks5://host[:port]` or `socks5h://…`; a bare `host:port` is an HTTP proxy. Throws
    /// ``CourierError/Code/invalidParameter`` for another scheme, a missing host or a bad port.
    public init(url text: String) throws {
        let trimmed = text.trimmingSpaces()
        let withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed
        func invalid(_ reason: String) -> CourierError {
            CourierError(
                code: .invalidParameter,
                message: "proxy \"\(CourierError.printable(Self.withoutCredentials(withScheme)))\": \(reason)"
            )
        }
        guard let components = URLComponents(string: withScheme), let host = components.host, !host.isEmpty else {
            throw invalid("not a proxy URL with a host")
        }
        let kind: Kind
        switch components.scheme?.lowercased() {
        case "http": kind = .http
        case "socks5", "socks5h": kind = .socks5
        default: throw invalid("use http://, socks5:// or socks5h://")
        }
        if let port = components.port, !(1...65_535).contains(port) { throw invalid("the port must be 1 to 65535") }
        var credentials: Credentials?
        if let user = components.user {
            credentials = Credentials(username: user, password: components.password ?? "")
        }
        self.init(
            kind: kind,
            host: host,
            port: components.port ?? (kind == .http ? 3128 : 1080),
            credentials: credentials
        )
    }

    /// `text` with anything between `://` and `@` (the credentials) replaced by `***`, for error messages.
    private static func withoutCredentials(_ text: String) -> String {
        guard let start = text.firstRange(of: "://"), let at = text[start.upperBound...].firstIndex(of: "@") else {
            return text
        }
        return text[..<start.upperBound] + "***" + text[at...]
    }

    /// `KIND://HOST:PORT`, with any credentials left out.
    public var description: String { "\(kind.rawValue)://\(host):\(port)" }

    /// The typed error for a proxy's refusal: `what` it did, after the proxy's name (never its credentials), or
    /// after "the proxy" when which one is not known (an `HTTPClient` of the caller's with a proxy of its own).
    static func refusal(by proxy: Proxy?, _ what: String) -> CourierError {
        let name =
            proxy.map { "the \($0.kind == .http ? "HTTP" : "SOCKS5") proxy \($0.host):\($0.port)" } ?? "the proxy"
        var error = CourierError(code: .connectionFailed, message: CourierError.printable("\(name) \(what)"))
        error.isProxyRefusal = true
        return error
    }

    /// The refusal of an HTTP proxy's 407: it wants credentials, or refused the ones it was given.
    static func authenticationRefusal(by proxy: Proxy?) -> CourierError {
        refusal(
            by: proxy,
            proxy.map { $0.credentials == nil } == true
                ? "wants credentials (407 Proxy Authentication Required) and none were given"
                : "refused the credentials (407 Proxy Authentication Required)"
        )
    }

    /// The refusal of a SOCKS5 proxy that accepts none of the authentication methods offered: without
    /// credentials, it wants some.
    static func authenticationMethodRefusal(by proxy: Proxy?) -> CourierError {
        refusal(
            by: proxy,
            proxy.map { $0.credentials == nil } == true
                ? "wants credentials and none were given"
                : "accepts none of the offered authentication methods"
        )
    }
}
