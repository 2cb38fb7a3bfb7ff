#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The session's TLS policies: one default and any number per host.
///
/// ```swift
/// let config = Configuration {
///     $0.tls.default.trustRoots = .file("/etc/ssl/corp-ca.pem")
///     $0.tls.hosts["api.example.com"] = TLSPolicy(pinning: .publicKeys(["…=", "…="]))
///     $0.tls.hosts["*.cdn.example.com"] = TLSPolicy(pinning: .certificates([cdnRootPEM]))
/// }
/// ```
public struct TLSSettings: Sendable, Hashable {
    /// The policy for hosts that have none of their own.
    public var `default`: TLSPolicy
    /// Policies by host name, compared without case. A key `*.example.com` covers every subdomain of
    /// `example.com` (not `example.com` itself); an exact key wins over a wildcard.
    public var hosts: [String: TLSPolicy]

    /// Creates settings.
    public init(default: TLSPolicy = .standard, hosts: [String: TLSPolicy] = [:]) {
        self.default = `default`
        self.hosts = hosts
    }

    /// The policy that applies to `url`'s host; the host is read only when some host has its own policy.
    func policy(for url: URL) -> TLSPolicy {
        hosts.isEmpty ? self.default : policy(forHost: url.host() ?? "")
    }

    /// The policy that applies to `host`: its own, else the closest wildcard, else the default.
    public func policy(forHost host: String) -> TLSPolicy {
        guard !hosts.isEmpty else { return self.default }
        let host = host.lowercased()
        // One pass over the keys, with no table built per request: an exact key wins at once; among wildcards
        // the longest (closest) matching suffix wins.
        var closest: (length: Int, policy: TLSPolicy)?
        for (key, policy) in hosts {
            let key = key.lowercased()
            if key == host { return policy }
            guard key.hasPrefix("*.") else { continue }
            let suffix = key.dropFirst(1)  // ".example.com"
            if host.hasSuffix(suffix), host.count > suffix.count, suffix.count > closest?.length ?? 0 {
                closest = (suffix.count, policy)
            }
        }
        return closest?.policy ?? self.default
    }
}
