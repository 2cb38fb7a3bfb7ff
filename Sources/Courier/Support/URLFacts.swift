#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the request path asks of a request's URL more than once, worked out once. Reading a `URL`'s scheme or
/// host makes a new string each time; a path resolved under the configuration keeps these beside its URL (see
/// `SessionState`), and a request carries them until its URL changes.
struct URLFacts: Sendable {
    /// Whether the scheme is `https`.
    let isHTTPS: Bool
    /// The host as written, lowercased: the key the pool counts a host's requests by (decoding it cost a
    /// microsecond a request, and the key is only compared).
    let hostKey: String
    /// Whether the URL holds a `user[:password]@`, which preparation moves into `Authorization`: read once per
    /// path, so a request without one pays nothing for the check.
    let hasUserInfo: Bool
    /// Why the port cannot be connected to (see `URL.portProblem`), `nil` when it can: a transport checks it
    /// before a dependency sees the URL, once per path instead of once per request.
    let portProblem: String?

    init(_ url: URL) {
        isHTTPS = url.isHTTPS
        hostKey = url.host(percentEncoded: true)?.lowercased() ?? ""
        hasUserInfo = url.user(percentEncoded: true) != nil
        portProblem = url.portProblem
    }
}
