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

    /// The policy that applies to `host`: its own, else the closest wildcard, else the default.
    public func policy(forHost host: String) -> TLSPolicy {
        guard !hosts.isEmpty else { return self.default }
        let host = host.lowercased()
        let keyed = Dictionary(hosts.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        if let exact = keyed[host] { return exact }
        var suffix = Substring(host)
        while let dot = suffix.firstIndex(of: ".") {
            suffix = suffix[suffix.index(after: dot)...]
            if let wildcard = keyed["*." + suffix] { return wildcard }
        }
        return self.default
    }
}
