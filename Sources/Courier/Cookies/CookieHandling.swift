/// What a session does with its ``Configuration/cookieJar``.
public struct CookieHandling: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: Int

    /// Creates a value from raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Add a `Cookie` header with the jar's matching cookies to every request (after the request's own).
    public static let send = CookieHandling(rawValue: 1 << 0)
    /// Store every response's `Set-Cookie` headers in the jar, redirects included.
    public static let store = CookieHandling(rawValue: 1 << 1)
}
