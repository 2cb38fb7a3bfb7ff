#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Which proxy each request goes through: one for `http` URLs, one for `https` URLs, and hosts that go direct.
///
/// ```swift
/// let fromEnvironment = try Configuration { $0.proxies = try ProxySettings.environment() }   // http_proxy, https_proxy, no_proxy
/// let throughSOCKS = Configuration { $0.proxies = ProxySettings(all: .socks5(host: "127.0.0.1", port: 1080)) }
/// ```
public struct ProxySettings: Sendable, Hashable {
    /// The proxy for `http` URLs.
    public var http: Proxy?
    /// The proxy for `https` URLs.
    public var https: Proxy?
    /// Hosts that go direct: `example.com` (and its subdomains), `.example.com` (the same), an IP address,
    /// or `*` for every host. Compared without case and without a port.
    public var bypass: [String]
    /// Whether loopback hosts (`localhost`, `127.0.0.0/8`, `::1`) go direct whatever ``bypass`` says, as Go's
    /// and most tools' environment handling does.
    public var bypassesLoopback: Bool

    /// Settings that send `http` URLs through `http` and `https` URLs through `https`.
    public init(http: Proxy? = nil, https: Proxy? = nil, bypass: [String] = [], bypassesLoopback: Bool = false) {
        self.http = http
        self.https = https
        self.bypass = bypass
        self.bypassesLoopback = bypassesLoopback
    }

    /// Settings that send every request through `proxy`.
    public init(all proxy: Proxy, bypass: [String] = []) {
        self.init(http: proxy, https: proxy, bypass: bypass)
    }

    /// No proxy at all.
    public static let none = ProxySettings()

    /// The settings the environment asks for: `http_proxy`, `https_proxy` (else `all_proxy`) and `no_proxy`, in
    /// lowercase or uppercase (lowercase wins; uppercase `HTTP_PROXY` is ignored, as curl does, because CGI
    /// sets it from a request header). Loopback hosts go direct. A malformed value is an error, not ignored.
    public static func environment(
        _ variables: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> ProxySettings {
        func value(_ name: String, upper: Bool = true) -> String? {
            let found = variables[name] ?? (upper ? variables[name.uppercased()] : nil)
            return found.flatMap { $0.trimmingSpaces().isEmpty ? nil : $0 }
        }
        let all = try value("all_proxy").map(Proxy.init(url:))
        return ProxySettings(
            http: try value("http_proxy", upper: false).map(Proxy.init(url:)) ?? all,
            https: try value("https_proxy").map(Proxy.init(url:)) ?? all,
            bypass: (value("no_proxy") ?? "").split(separator: ",").map { $0.trimmingSpaces() }
                .filter { !$0.isEmpty },
            bypassesLoopback: true
        )
    }

    /// The proxy a request to `url` goes through, or `nil` to go direct.
    public func proxy(for url: URL) -> Proxy? {
        guard http != nil || https != nil else { return nil }  // the usual case: no URL to look at
        let proxy = url.isHTTPS ? https : http
        guard let proxy, let host = url.host(percentEncoded: false)?.lowercased() else { return nil }
        if bypassesLoopback && (host.isLoopbackHost || host.hasSuffix(".localhost")) { return nil }
        for entry in bypass.map({ $0.lowercased() }) {
            if entry == "*" { return nil }
            let domain =
                (entry.hasPrefix(".") ? String(entry.dropFirst()) : entry).split(separator: ":").first.map(String.init)
                ?? entry
            if host == domain || host.hasSuffix("." + domain) { return nil }
        }
        return proxy
    }
}
