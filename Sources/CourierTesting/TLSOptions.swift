import NIOSSL

extension TestServer {
    /// How a ``TestServer`` speaks TLS.
    ///
    /// ```swift
    /// let ca = try TestCertificateAuthority()
    /// let server = try await TestServer.start(tls: .init(identity: try ca.issue()))
    /// ```
    public struct TLSOptions: Sendable {
        /// The server's certificate and key.
        public var identity: TestIdentity
        /// When set, clients must present a certificate issued by this CA (PEM): mutual TLS.
        public var clientCertificateAuthorityPEM: String?

        /// Creates options.
        public init(identity: TestIdentity, clientCertificateAuthorityPEM: String? = nil) {
            self.identity = identity
            self.clientCertificateAuthorityPEM = clientCertificateAuthorityPEM
        }

        func serverConfiguration() throws -> TLSConfiguration {
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(identity.certificatePEM.utf8)).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem)))
            if let clientCA = clientCertificateAuthorityPEM {
                configuration.certificateVerification = .noHostnameVerification
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(clientCA.utf8)))
            }
            return configuration
        }
    }
}
