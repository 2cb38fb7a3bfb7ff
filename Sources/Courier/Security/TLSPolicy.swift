/// How Courier checks a server's certificate and which certificate it presents itself (HLNetworking's security
/// policy, RBEFireworks' `allowInvalidCertificates`).
///
/// Verification is on by default: the chain must lead to a trusted root and the certificate must name the host.
///
/// ```swift
/// var policy = TLSPolicy()
/// policy.trustRoots = .file("/etc/courier/ca.pem")
/// policy.clientIdentity = ClientIdentity(certificateFile: "client.pem", privateKeyFile: "client.key")
/// policy.pinning = .publicKeys(["Wm1s…base64…="])
/// ```
///
/// See <doc:TLSAndPinning> for exactly what each setting guarantees.
public struct TLSPolicy: Sendable, Hashable {
    /// The certificates a server's chain must lead to.
    public var trustRoots: TrustRoots
    /// A client certificate for servers that ask for one (mutual TLS); `nil` presents none.
    public var clientIdentity: ClientIdentity?
    /// Whether the certificate must name the host the request goes to (default `true`).
    public var validatesDomainName: Bool
    /// Accept any certificate: expired, self-signed, for another host. Only for testing; Courier logs a warning
    /// for every host it connects to this way. Public-key pins are still checked.
    public var allowsInvalidCertificates: Bool
    /// What the server's certificate must additionally match.
    public var pinning: CertificatePinning

    /// Creates a policy; the defaults verify against the system's roots with no pinning.
    public init(
        trustRoots: TrustRoots = .system,
        clientIdentity: ClientIdentity? = nil,
        validatesDomainName: Bool = true,
        allowsInvalidCertificates: Bool = false,
        pinning: CertificatePinning = .none
    ) {
        self.trustRoots = trustRoots
        self.clientIdentity = clientIdentity
        self.validatesDomainName = validatesDomainName
        self.allowsInvalidCertificates = allowsInvalidCertificates
        self.pinning = pinning
    }

    /// The default: full verification against the system's roots.
    public static let standard = TLSPolicy()

    /// Whether this policy is the default one, which needs no per-request TLS set-up.
    var isStandard: Bool { self == .standard }
}

/// The certificates a chain must lead to.
public enum TrustRoots: Sendable, Hashable {
    /// The operating system's CA bundle.
    case system
    /// The certificates in a PEM file (a custom CA bundle, like curl's `--cacert`); the system's roots are not used.
    case file(String)
    /// PEM-encoded certificates given in memory; the system's roots are not used.
    case pem(String)
}

/// A client certificate and its private key, both PEM files, for mutual TLS.
public struct ClientIdentity: Sendable, Hashable {
    /// A PEM file with the client certificate, followed by any intermediates the server needs.
    public var certificateFile: String
    /// A PEM file with the certificate's unencrypted private key.
    public var privateKeyFile: String

    /// Creates an identity from two PEM files.
    public init(certificateFile: String, privateKeyFile: String) {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
    }
}
