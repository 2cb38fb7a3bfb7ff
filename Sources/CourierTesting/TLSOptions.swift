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
        /// Offer HTTP/2 through ALPN (clients that do not ask for it get HTTP/1.1). Over HTTP/2 each stream is
        /// served by the same routes, except those that write malformed HTTP/1 on purpose.
        public var http2: Bool
        /// With HTTP/2, how many streams a connection serves, as nginx's `keepalive_requests`: after the last,
        /// the server sends `GOAWAY` (`NO_ERROR`, naming that stream), serves the streams it took, and closes.
        /// Streams the client opened above it are not processed. `nil`: no limit.
        public var http2StreamsPerConnection: Int?

        /// Creates options.
        public init(
            identity: TestIdentity,
            clientCertificateAuthorityPEM: String? = nil,
            http2: Bool = false,
            http2StreamsPerConnection: Int? = nil
        ) {
            self.identity = identity
            self.clientCertificateAuthorityPEM = clientCertificateAuthorityPEM
            self.http2 = http2
            self.http2StreamsPerConnection = http2StreamsPerConnection
        }

        func serverConfiguration() throws -> TLSConfiguration {
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(identity.certificatePEM.utf8)).map {
                    .certificate($0)
                },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem))
            )
            configuration.applicationProtocols = http2 ? ["h2", "http/1.1"] : ["http/1.1"]
            if let clientCA = clientCertificateAuthorityPEM {
                configuration.certificateVerification = .noHostnameVerification
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(clientCA.utf8)))
            }
            return configuration
        }
    }
}
