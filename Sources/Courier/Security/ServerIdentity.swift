import NIOCore
import NIOSSL

/// The check that a server's certificate names the host a request is for, made where SwiftNIO SSL's own check is
/// not enough.
///
/// SwiftNIO SSL accepts a certificate when one of its IP-address names is the address it connected to, whatever the
/// host name the request was for. With the host mapped to an address (``Configuration/hostAddresses``, the CLI's
/// `--resolve`), any certificate for that address would then pass for the host. RFC 6125 (§6.2, §6.4) and curl
/// match a DNS host name against the certificate's DNS names only, so this check runs after SwiftNIO SSL's, on
/// connections whose address Courier chose: one to a mapped host, a relayed one, a WebSocket's.
enum ServerIdentity {
    /// Throws ``CourierError/Code/tls`` (an untrusted certificate) when `host` is a DNS name and `leaf` has
    /// subject alternative names of which no DNS name matches it. An IP-address host, and a certificate without
    /// alternative names (whose common name SwiftNIO SSL checked), are left to SwiftNIO SSL's check.
    static func check(_ leaf: NIOSSLCertificate, names host: String) throws {
        guard !host.isIPAddress else { return }
        let wanted = Array(normalized(host).utf8)
        var hasNames = false
        for name in leaf._subjectAlternativeNames() {  // the list SwiftNIO SSL's own check reads
            hasNames = true
            guard name.nameType == .dnsName else { continue }
            if matches(wanted, pattern: Array(normalized(String(decoding: name.contents, as: UTF8.self)).utf8)) {
                return
            }
        }
        guard hasNames else { return }
        var failure = CourierError(
            code: .tls,
            message: "TLS with \(host) failed: its certificate does not name this host"
        )
        failure.isUntrustedCertificate = true
        throw failure
    }

    /// ``check(_:names:)`` for the certificate the TLS handler in `pipeline` received; call on its event loop once
    /// the handshake is done.
    static func check(_ pipeline: ChannelPipeline.SynchronousOperations, names host: String) throws {
        let handler = try pipeline.handler(type: NIOSSLClientHandler.self)
        guard let leaf = handler.peerCertificate else {
            throw CourierError(code: .tls, message: "\(host) presented no certificate")
        }
        try check(leaf, names: host)
    }

    /// Lowercase, without the trailing dot of an absolute name.
    private static func normalized(_ name: String) -> String {
        let lowered = name.lowercased()
        return lowered.hasSuffix(".") ? String(lowered.dropLast()) : lowered
    }

    /// Whether `host` matches the certificate name `pattern`: equal, or `pattern` is `*.` and a suffix that `host`
    /// has after exactly one label of its own (a wildcard stands for one whole leftmost label, RFC 6125 §6.4.3).
    static func matches(_ host: [UInt8], pattern: [UInt8]) -> Bool {
        guard pattern.count >= 3, pattern[0] == UInt8(ascii: "*"), pattern[1] == UInt8(ascii: ".") else {
            return host == pattern
        }
        let suffix = pattern.dropFirst(1)  // ".example.com"
        // the suffix must itself have two labels: "*.com" names no host
        guard suffix.dropFirst().contains(UInt8(ascii: ".")),
            let firstDot = host.firstIndex(of: UInt8(ascii: ".")), firstDot > 0
        else { return false }
        return host[firstDot...].elementsEqual(suffix)
    }
}
