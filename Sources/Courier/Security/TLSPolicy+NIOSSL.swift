import NIOSSL

extension TLSPolicy {
    /// The SwiftNIO SSL client configuration that enforces this policy, except public-key pins, which
    /// ``ConnectionRelay`` checks on the connection. Files are read here, so a missing or malformed one fails the
    /// request with a clear error instead of failing inside the handshake.
    func makeTLSConfiguration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if allowsInvalidCertificates {
            configuration.certificateVerification = .none
        } else if !validatesDomainName {
            configuration.certificateVerification = .noHostnameVerification
        }
        if case .certificates(let pems) = pinning {
            configuration.trustRoots = .certificates(
                try pems.flatMap { try Self.certificates(pem: $0, what: "pinned certificate") }
            )
        } else {
            switch trustRoots {
            case .system: configuration.trustRoots = .default
            case .file(let path):
                configuration.trustRoots = .certificates(try Self.certificates(file: path, what: "CA bundle"))
            case .pem(let pem):
                configuration.trustRoots = .certificates(try Self.certificates(pem: pem, what: "trust root"))
            }
        }
        if let identity = clientIdentity {
            configuration.certificateChain = try Self.certificates(
                file: identity.certificateFile,
                what: "client certificate"
            )
            .map { .certificate($0) }
            do {
                configuration.privateKey = .privateKey(
                    try NIOSSLPrivateKey(file: identity.privateKeyFile, format: .pem)
                )
            } catch {
                throw CourierError(
                    code: .tls,
                    message:
                        "cannot read the client private key \"\(identity.privateKeyFile)\" (an unencrypted PEM key is needed)",
                    underlying: error
                )
            }
        }
        return configuration
    }

    private static func certificates(file path: String, what: String) throws -> [NIOSSLCertificate] {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(path)
        } catch {
            throw CourierError(
                code: .tls,
                message: "cannot read the \(what) \"\(path)\" as PEM certificates",
                underlying: error
            )
        }
        guard !certificates.isEmpty else {
            throw CourierError(code: .tls, message: "the \(what) \"\(path)\" holds no PEM certificate")
        }
        return certificates
    }

    private static func certificates(pem: String, what: String) throws -> [NIOSSLCertificate] {
        let certificates: [NIOSSLCertificate]
        do {
            certificates = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
        } catch {
            throw CourierError(code: .tls, message: "the \(what) is not PEM", underlying: error)
        }
        guard !certificates.isEmpty else {
            throw CourierError(code: .tls, message: "the \(what) holds no PEM certificate")
        }
        return certificates
    }
}
