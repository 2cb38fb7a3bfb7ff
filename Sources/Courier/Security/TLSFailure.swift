import NIOSSL

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns SwiftNIO SSL's errors into one clear ``CourierError`` that names the host.
enum TLSFailure {
    /// The typed error for a failed handshake or TLS connection with `host`.
    static func describe(_ error: any Error, host: String) -> CourierError {
        if let error = error as? CourierError { return error }
        let text = "\(error)"
        let reason: String
        var isUntrusted = false
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            reason = "its certificate does not name this host"
            isUntrusted = true
        } else if text.contains("CERTIFICATE_VERIFY_FAILED") {
            reason = "its certificate could not be verified (untrusted, expired, or for another host)"
            isUntrusted = true
        } else if text.contains("TLSV1_ALERT") || text.contains("SSLV3_ALERT") {
            reason = "the server refused the handshake (\(Self.alert(in: text)))"
        } else if let ssl = error as? NIOSSLError, ssl == .uncleanShutdown {
            return CourierError(
                code: .connectionClosed,
                message: "\(host) closed the TLS connection without a close_notify",
                underlying: error
            )
        } else {
            reason = text
        }
        var failure = CourierError(code: .tls, message: "TLS with \(host) failed: \(reason)", underlying: error)
        failure.isUntrustedCertificate = isUntrusted
        return failure
    }

    /// The alert name in a BoringSSL error text, such as `TLSV1_ALERT_UNKNOWN_CA` or
    /// `SSLV3_ALERT_HANDSHAKE_FAILURE` (a client certificate the server wanted and did not get, among others).
    private static func alert(in text: String) -> String {
        guard let start = text.firstRange(of: "TLSV1_ALERT") ?? text.firstRange(of: "SSLV3_ALERT") else {
            return "alert"
        }
        return String(text[start.lowerBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
    }
}
