import NIOCore

extension String {
    /// Whether the string is an IPv4 or IPv6 literal, which cannot be sent as a TLS server name.
    package var isIPAddress: Bool {
        (try? SocketAddress(ipAddress: self, port: 0)) != nil
    }

    /// Whether the host (as a URL gives it, lowercase) names this machine's loopback: `localhost`, `127.*`,
    /// `::1` (or `[::1]`).
    package var isLoopbackHost: Bool {
        self == "localhost" || hasPrefix("127.") || self == "::1" || self == "[::1]"
    }
}
