import Crypto
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A certificate authority made at run time, for TLS tests and demos: nothing is read from disk or the network.
///
/// ```swift
/// let ca = try TestCertificateAuthority()
/// let server = try ca.issue(hosts: ["localhost"])
/// let tlsServer = try await TestServer.start(tls: .init(identity: server))
/// // trust ca.certificatePEM in the client
/// ```
public struct TestCertificateAuthority: Sendable {
    /// The CA's certificate, PEM-encoded: the trust root clients are given.
    public let certificatePEM: String
    private let certificate: Certificate
    private let key: P256.Signing.PrivateKey

    /// Creates a self-signed CA valid from yesterday for ten years.
    public init(name: String = "Courier Test CA") throws {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(name) }
        let publicKey = Certificate.PublicKey(key.publicKey)
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-86_400),
            notValidAfter: now.addingTimeInterval(10 * 365 * 86_400),
            issuer: subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: publicKey)
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        self.certificate = certificate
        self.key = key
        self.certificatePEM = try certificate.serializeAsPEM().pemString
    }

    /// Issues a certificate for `hosts` (DNS names and IP literals), for a server or, with `forClient`, for a
    /// client presenting it in mutual TLS. `validity` defaults to yesterday through next year; pass a past range
    /// for an expired certificate.
    public func issue(
        hosts: [String] = ["localhost", "127.0.0.1"],
        forClient: Bool = false,
        validity: ClosedRange<Date>? = nil
    ) throws -> TestIdentity {
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let now = Date()
        let validity = validity ?? now.addingTimeInterval(-86_400)...now.addingTimeInterval(365 * 86_400)
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: publicKey,
            notValidBefore: validity.lowerBound,
            notValidAfter: validity.upperBound,
            issuer: self.certificate.subject,
            subject: try DistinguishedName { CommonName(hosts.first ?? "client") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([forClient ? .clientAuth : .serverAuth])
                SubjectAlternativeNames(Self.alternativeNames(hosts))
                SubjectKeyIdentifier(hash: publicKey)
                AuthorityKeyIdentifier(
                    keyIdentifier: try self.certificate.extensions.subjectKeyIdentifier?.keyIdentifier
                )
            },
            issuerPrivateKey: Certificate.PrivateKey(self.key)
        )
        return TestIdentity(
            certificatePEM: try certificate.serializeAsPEM().pemString,
            privateKeyPEM: key.pemRepresentation,
            publicKeyPin: try Self.pin(of: publicKey)
        )
    }

    /// A self-signed server certificate for `hosts`, trusted by nobody unless pinned or given as a root.
    public static func selfSigned(hosts: [String] = ["localhost", "127.0.0.1"]) throws -> TestIdentity {
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let subject = try DistinguishedName { CommonName(hosts.first ?? "localhost") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-86_400),
            notValidAfter: now.addingTimeInterval(365 * 86_400),
            issuer: subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                // so it can be its own trust anchor
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(alternativeNames(hosts))
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        return TestIdentity(
            certificatePEM: try certificate.serializeAsPEM().pemString,
            privateKeyPEM: key.pemRepresentation,
            publicKeyPin: try pin(of: publicKey)
        )
    }

    private static func alternativeNames(_ hosts: [String]) -> [GeneralName] {
        hosts.map { host in
            if let address = IPv4Address(host) { return .ipAddress(ASN1OctetString(contentBytes: address.bytes[...])) }
            return .dnsName(host)
        }
    }

    private static func pin(of publicKey: Certificate.PublicKey) throws -> String {
        Data(SHA256.hash(data: try publicKey.serializeAsPEM().derBytes)).base64EncodedString()
    }
}

/// A certificate and its private key, PEM-encoded.
public struct TestIdentity: Sendable {
    /// The certificate.
    public let certificatePEM: String
    /// The unencrypted private key (PKCS #8).
    public let privateKeyPEM: String
    /// The base64 SHA-256 of the certificate's SubjectPublicKeyInfo: its public-key pin.
    public let publicKeyPin: String

    /// Writes `NAME.pem` and `NAME.key` into `directory` and returns their paths.
    public func write(to directory: URL, name: String) throws -> (certificate: String, privateKey: String) {
        let certificate = directory.appending(path: name + ".pem")
        let privateKey = directory.appending(path: name + ".key")
        try Data(certificatePEM.utf8).write(to: certificate)
        try Data(privateKeyPEM.utf8).write(to: privateKey)
        return (certificate.path(percentEncoded: false), privateKey.path(percentEncoded: false))
    }
}

/// The four bytes of a dotted IPv4 literal.
private struct IPv4Address {
    let bytes: [UInt8]

    init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
        guard parts.count == 4, parts.allSatisfy({ $0 != nil }) else { return nil }
        bytes = parts.compactMap { $0 }
    }
}
