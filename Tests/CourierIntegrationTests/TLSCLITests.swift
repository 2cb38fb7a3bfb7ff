import CourierTesting
import Foundation
import Testing

@Suite("courier's TLS options against the HTTPS loopback server")
struct TLSCLITests {
    @Test func cacertPinInsecureAndTheirErrors() async throws {
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issue()
        let directory = try newTemporaryDirectory(prefix: "courier-tls-cli")
        let caFile = directory.appending(path: "ca.pem").path(percentEncoded: false)
        try Data(authority.certificatePEM.utf8).write(to: URL(filePath: caFile))
        try await withTestServer(tls: .init(identity: leaf)) { server in
            let url = server.url("/echo").absoluteString

            let untrusted = try await CLI.run(["get", url])
            #expect(untrusted.status != 0)
            #expect(untrusted.stderr.contains("TLS with localhost failed"), "\(untrusted.stderr)")

            let trusted = try await CLI.run(["get", url, "--cacert", caFile])
            #expect(trusted.status == 0, "\(trusted.stderr)")
            #expect(trusted.stdout.contains("\"method\":\"GET\""))

            let pinned = try await CLI.run(["get", url, "--cacert", caFile, "--pin", "sha256/" + leaf.publicKeyPin])
            #expect(pinned.status == 0, "\(pinned.stderr)")

            let wrongPin = try await CLI.run([
                "get", url, "--cacert", caFile, "--pin", "sha256/" + (try authority.issue()).publicKeyPin,
            ])
            #expect(wrongPin.status != 0)
            #expect(wrongPin.stderr.contains("certificate pin mismatch for localhost"), "\(wrongPin.stderr)")

            let insecure = try await CLI.run(["get", url, "--insecure"])
            #expect(insecure.status == 0, "\(insecure.stderr)")
            #expect(insecure.stderr.contains("verification is OFF for localhost"))
            #expect(!insecure.stdout.contains("verification"))

            let badPin = try await CLI.run(["get", url, "--pin", "sha256/short"])
            #expect(badPin.status != 0)
            #expect(badPin.stderr.contains("is not a public-key pin"))

            let certWithoutKey = try await CLI.run(["get", url, "--cert", caFile])
            #expect(certWithoutKey.status != 0)
            #expect(certWithoutKey.stderr.contains("--cert and --key go together"))

            let missingBundle = try await CLI.run(["get", url, "--cacert", "/nonexistent/ca.pem"])
            #expect(missingBundle.status != 0)
            #expect(missingBundle.stderr.contains("cannot read the CA bundle"))
            #expect(server.hits("/echo") == 3)  // trusted, pinned and insecure; every refused one sent nothing
        }
    }

    /// curl's `--resolve` keeps the certificate check on the URL's name: against a certificate for `localhost` and
    /// `127.0.0.1` only, `https://other.test` mapped to 127.0.0.1 is refused with curl's 60.
    @Test func resolveChecksTheCertificateAgainstTheURLsName() async throws {
        let authority = try TestCertificateAuthority()
        let directory = try newTemporaryDirectory(prefix: "courier-tls-resolve")
        let caFile = directory.appending(path: "ca.pem").path(percentEncoded: false)
        try Data(authority.certificatePEM.utf8).write(to: URL(filePath: caFile))
        try await withTestServer(tls: .init(identity: try authority.issue())) { server in
            let resolve = "other.test:\(server.port):127.0.0.1"
            let url = "https://other.test:\(server.port)/echo"
            let refused = try await CLI.run(["-s", "--cacert", caFile, "--resolve", resolve, url])
            #expect(refused.status == 60, "\(refused.stderr)")
            let named = try await CLI.run([
                "-s", "--cacert", caFile, "--resolve", "localhost:\(server.port):127.0.0.1",
                "https://localhost:\(server.port)/echo",
            ])
            #expect(named.status == 0, "\(named.stderr)")
            #expect(server.hits("/echo") == 1)
        }
    }
}
