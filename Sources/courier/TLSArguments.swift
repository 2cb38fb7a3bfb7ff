import ArgumentParser
import Courier

/// `--cacert`, `--cert`/`--key`, `--pin` and `--insecure`, shared by the request commands.
struct TLSArguments: ParsableArguments {
    @Option(help: ArgumentHelp("Trust the CA certificates in this PEM file instead of the system's.", valueName: "file"))
    var cacert: String?

    @Option(help: ArgumentHelp("A client certificate (PEM) for mutual TLS; needs --key.", valueName: "file"))
    var cert: String?

    @Option(help: ArgumentHelp("The client certificate's unencrypted private key (PEM).", valueName: "file"))
    var key: String?

    @Option(help: ArgumentHelp("Require this public key, sha256/BASE64 of the server's SubjectPublicKeyInfo. Repeatable.",
                               valueName: "pin"))
    var pin: [String] = []

    @Flag(name: [.customShort("k"), .long], help: "Accept any server certificate (expired, self-signed, other host). Testing only.")
    var insecure = false

    /// Sets the session's default TLS policy from the options.
    func apply(to configuration: inout Configuration) throws {
        configuration.tls.default = try CommandLineInput.tlsPolicy(caBundle: cacert, certificate: cert, privateKey: key,
                                                                   pins: pin, insecure: insecure)
    }
}
