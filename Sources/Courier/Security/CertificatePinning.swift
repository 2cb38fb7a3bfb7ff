import Crypto
import NIOCore
import NIOSSL

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a server's certificate must match beyond ordinary verification.
///
/// - ``none``: ordinary verification only.
/// - ``publicKeys(_:)``: the leaf certificate's public key (the SHA-256 of its DER SubjectPublicKeyInfo, in
///   base64, as HPKP and OkHttp spell it) must be one of the pins. Give several for key rotation. Courier checks
///   the pin on the very connection that carries the request, right after the handshake and before a byte of the
///   request is sent on it.
/// - ``certificates(_:)``: the chain must lead to one of these certificates, which replace every other trust
///   root. Pin a root CA you control or a self-signed server certificate: a chain that only passes through a
///   pinned intermediate is rejected.
public enum CertificatePinning: Sendable, Hashable {
    /// No pinning.
    case none
    /// Base64 SHA-256 hashes of allowed leaf SubjectPublicKeyInfos (`sha256/` prefixes are accepted and dropped).
    case publicKeys([String])
    /// PEM-encoded certificates that are the only trust anchors.
    case certificates([String])

    /// The pins of ``publicKeys(_:)`` without any `sha256/` prefix; empty for the other modes.
    var publicKeyHashes: Set<String> {
        guard case .publicKeys(let pins) = self else { return [] }
        return Set(pins.map(Self.hash(ofPin:)))
    }

    /// A pin's base64 hash, without the `sha256/` prefix HPKP and curl write before it.
    package static func hash(ofPin pin: String) -> String {
        pin.hasPrefix("sha256/") ? String(pin.dropFirst("sha256/".count)) : pin
    }

    /// The public-key pin of a PEM certificate: the base64 SHA-256 of its SubjectPublicKeyInfo.
    ///
    /// ```swift
    /// let pin = try CertificatePinning.publicKeyHash(ofPEM: String(contentsOfFile: "server.pem", encoding: .utf8))
    /// ```
    public static func publicKeyHash(ofPEM pem: String) throws -> String {
        let certificate: NIOSSLCertificate
        do {
            certificate = try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem)
        } catch {
            throw CourierError(code: .tls, message: "not a PEM certificate", underlying: error)
        }
        return try publicKeyHash(of: certificate)
    }

    /// The public-key pin of a certificate.
    static func publicKeyHash(of certificate: NIOSSLCertificate) throws -> String {
        let spki = try certificate.extractPublicKey().toSPKIBytes()
        return Data(SHA256.hash(data: spki)).base64EncodedString()
    }
}

extension CertificatePinning {
    /// Checks, once the TLS handshake on `context`'s channel is done, that the server's leaf certificate has one of
    /// `pins` as its public key; does nothing without pins (verification alone decides). Throws
    /// ``CourierError/Code/tls`` naming `host` on a mismatch. Call on the channel's event loop.
    static func check(_ context: ChannelHandlerContext, against pins: Set<String>, host: String) throws {
        guard !pins.isEmpty else { return }
        let handler = try context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
        guard let leaf = handler.peerCertificate else {
            throw CourierError(code: .tls, message: "\(host) presented no certificate to check against its pins")
        }
        let presented = try publicKeyHash(of: leaf)
        guard pins.contains(presented) else {
            throw CourierError(
                code: .tls,
                message: "certificate pin mismatch for \(host): its public key sha256/\(presented) is not pinned"
            )
        }
    }
}
