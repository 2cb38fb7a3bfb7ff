import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CommandLineInput {
    /// A TLS policy from curl's options: `--cacert FILE`, `--cert FILE` with `--key FILE`, `--pin sha256/BASE64`
    /// (repeatable) and `--insecure`. A pin must be the base64 of a 32-byte SHA-256; a certificate needs its key.
    static func tlsPolicy(
        caBundle: String?,
        certificate: String?,
        privateKey: String?,
        pins: [String],
        insecure: Bool
    ) throws -> TLSPolicy {
        var policy = TLSPolicy()
        if let caBundle { policy.trustRoots = .file(caBundle) }
        switch (certificate, privateKey) {
        case (let certificate?, let privateKey?):
            policy.clientIdentity = ClientIdentity(certificateFile: certificate, privateKeyFile: privateKey)
        case (nil, nil): break
        default:
            throw CourierError(
                code: .invalidParameter,
                message: "--cert and --key go together: a client certificate needs its private key"
            )
        }
        if !pins.isEmpty {
            for pin in pins {
                guard let bytes = Data(base64Encoded: CertificatePinning.hash(ofPin: pin)), bytes.count == 32 else {
                    throw CourierError(
                        code: .invalidParameter,
                        message:
                            "\"\(CourierError.printable(pin))\" is not a public-key pin: use sha256/ and the base64 of a SHA-256"
                    )
                }
            }
            policy.pinning = .publicKeys(pins)
        }
        policy.allowsInvalidCertificates = insecure
        return policy
    }
}
