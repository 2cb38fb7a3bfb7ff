#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One HTTP cookie, as RFC 6265 stores it.
///
/// ```swift
/// try await jar.set(Cookie(name: "session", value: "abc", domain: "api.example.com", secure: true))
/// ```
public struct Cookie: Sendable, Hashable, Codable {
    /// The name.
    public var name: String
    /// The value.
    public var value: String
    /// The host, or the domain whose subdomains share it; lowercase, without a leading dot.
    public var domain: String
    /// Whether only ``domain`` itself gets the cookie, not its subdomains (a cookie set without `Domain`).
    public var hostOnly: Bool
    /// The path prefix requests must have.
    public var path: String
    /// When it expires; `nil` for a session cookie.
    public var expires: Date?
    /// Sent only over HTTPS.
    public var secure: Bool
    /// Not for scripts; kept for fidelity (an HTTP client sends it like any other).
    public var httpOnly: Bool
    /// The `SameSite` attribute as the server set it, kept; an HTTP client has no cross-site context to apply it to.
    public var sameSite: SameSite?
    /// When it was first stored; older cookies are sent first among equal paths.
    public var created: Date

    /// The `SameSite` values.
    public enum SameSite: String, Sendable, Hashable, Codable, CaseIterable {
        /// `SameSite=Strict`.
        case strict = "Strict"
        /// `SameSite=Lax`.
        case lax = "Lax"
        /// `SameSite=None`.
        case none = "None"
    }

    /// Creates a cookie; `domain` is lowercased and loses a leading dot.
    public init(
        name: String,
        value: String,
        domain: String,
        hostOnly: Bool = true,
        path: String = "/",
        expires: Date? = nil,
        secure: Bool = false,
        httpOnly: Bool = false,
        sameSite: SameSite? = nil,
        created: Date = Date()
    ) {
        self.name = name
        self.value = value
        let lower = domain.lowercased()
        self.domain = lower.hasPrefix(".") ? String(lower.dropFirst()) : lower
        self.hostOnly = hostOnly
        self.path = path
        self.expires = expires
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
        self.created = created
    }

    /// Whether it has expired at `now`.
    public func isExpired(at now: Date = Date()) -> Bool {
        expires.map { $0 <= now } ?? false
    }

    /// Whether a request to `url` gets this cookie (RFC 6265 §5.4: domain, path and secure rules; not expiry).
    public func matches(_ url: URL) -> Bool {
        guard let host = url.host(percentEncoded: false)?.lowercased() else { return false }
        if secure && !url.isHTTPS { return false }
        let domainMatches = hostOnly ? host == domain : CookieRules.domainMatches(host: host, domain: domain)
        return domainMatches && CookieRules.pathMatches(requestPath: url.path(percentEncoded: true), cookiePath: path)
    }

    /// How a `Cookie` header carries it: `name=value`, or the value alone for a nameless cookie.
    var pair: String { name.isEmpty ? value : "\(name)=\(value)" }

    /// The identity a newer cookie replaces: name, domain and path.
    var key: Key { Key(name: name, domain: domain, path: path) }

    /// A cookie's identity in a jar.
    struct Key: Hashable {
        var name: String
        var domain: String
        var path: String
    }
}
