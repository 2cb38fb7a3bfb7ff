import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Runs `body` with an HTTPS loopback server presenting `identity`, and a session configured by `configure`.
private func withTLSServer<T>(
    _ identity: TestIdentity,
    clientCA: String? = nil,
    _ configure: (inout Configuration) -> Void,
    _ body: (Session, TestServer) async throws -> T
) async throws -> T {
    try await withServerSession(
        tls: .init(identity: identity, clientCertificateAuthorityPEM: clientCA),
        configure,
        body
    )
}

/// Expects `/echo` to answer 200.
private func expectAccepted(_ session: Session) async throws {
    let status = try await session.send(Request<Echo>.get("/echo")).status
    #expect(status == .ok)
}

/// Expects `/echo` to fail with a TLS error that names the host, before any request reached the server.
private func expectRejected(_ session: Session, _ server: TestServer, mentioning words: String...) async {
    let error = await courierError { _ = try await session.send(Request<Echo>.get("/echo")) }
    #expect(error?.code == .tls, "\(String(describing: error))")
    #expect(error?.message.contains("localhost") == true, "\(String(describing: error?.message))")
    for word in words { #expect(error?.message.contains(word) == true, "\(String(describing: error?.message))") }
    #expect(server.hits("/echo") == 0)
}

@Suite("TLS verification and pinning against the HTTPS loopback server")
struct TLSTests {
    let authority: TestCertificateAuthority
    let leaf: TestIdentity

    init() throws {
        authority = try TestCertificateAuthority()
        leaf = try authority.issue()
    }

    @Test func anUntrustedCertificateIsRejectedByDefault() async throws {
        try await withTLSServer(leaf, { _ in }) { session, server in
            await expectRejected(session, server, mentioning: "verified")
        }
    }

    @Test func aTrustedCertificateIsAccepted() async throws {
        try await withTLSServer(leaf, { $0.tls.default.trustRoots = .pem(authority.certificatePEM) }) { session, _ in
            let echo = try await session.send(Request<Echo>.get("/echo", query: ["q": "1"])).value
            #expect(echo.query == ["q": "1"])
        }
    }

    @Test func aCABundleFileIsReadAndAMissingOneIsAClearError() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-tls")
        let bundle = directory.appending(path: "ca.pem")
        try Data(authority.certificatePEM.utf8).write(to: bundle)
        try await withTLSServer(leaf, { $0.tls.default.trustRoots = .file(bundle.path(percentEncoded: false)) }) {
            session,
            _ in
            try await expectAccepted(session)
        }
        try await withTLSServer(leaf, { $0.tls.default.trustRoots = .file("/nonexistent/ca.pem") }) { session, server in
            let error = await courierError { _ = try await session.send(Request<Echo>.get("/echo")) }
            #expect(error?.code == .tls)
            #expect(error?.message.contains("cannot read the CA bundle \"/nonexistent/ca.pem\"") == true)
            #expect(server.totalHits == 0)
        }
    }

    @Test func theRightPublicKeyPinIsAcceptedOnTheConnectionThatCarriesTheRequest() async throws {
        let policy = TLSPolicy(
            trustRoots: .pem(authority.certificatePEM),
            pinning: .publicKeys(["sha256/" + leaf.publicKeyPin])
        )
        try await withTLSServer(leaf, { $0.tls.default = policy }) { session, server in
            let echo = try await session.send(Request<Echo>.post("/echo?x=%20y", body: .text("pinned"))).value
            #expect(echo.body == "pinned")
            #expect(echo.query == ["x": " y"])
            #expect(echo.header("host") == "localhost:\(server.port)")
            // Keep-alive and concurrency through the relay; a 4 MiB body arrives whole.
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 {
                    group.addTask { try await session.send(Request<Data>.get("/bytes/4194304")).value.count }
                }
                for try await count in group { #expect(count == 4_194_304) }
            }
        }
    }

    @Test func aWrongPinIsRejectedNamingTheHostAndNothingIsSent() async throws {
        let other = try authority.issue()
        let policy = TLSPolicy(trustRoots: .pem(authority.certificatePEM), pinning: .publicKeys([other.publicKeyPin]))
        try await withTLSServer(leaf, { $0.tls.default = policy }) { session, server in
            await expectRejected(session, server, mentioning: "pin mismatch", leaf.publicKeyPin)
        }
    }

    @Test func severalPinsAllowKeyRotation() async throws {
        let next = try authority.issue()
        let policy = TLSPolicy(
            trustRoots: .pem(authority.certificatePEM),
            pinning: .publicKeys([next.publicKeyPin, leaf.publicKeyPin])
        )
        try await withTLSServer(leaf, { $0.tls.default = policy }) { session, _ in
            try await expectAccepted(session)
        }
    }

    @Test func aPinDoesNotReplaceVerification() async throws {
        // The key matches, but the chain is not trusted: still rejected.
        let policy = TLSPolicy(pinning: .publicKeys([leaf.publicKeyPin]))
        try await withTLSServer(leaf, { $0.tls.default = policy }) { session, server in
            await expectRejected(session, server, mentioning: "verified")
        }
    }

    @Test func anExpiredCertificateIsRejected() async throws {
        let past = Date().addingTimeInterval(-30 * 86_400)...Date().addingTimeInterval(-86_400)
        let expired = try authority.issue(validity: past)
        try await withTLSServer(expired, { $0.tls.default.trustRoots = .pem(authority.certificatePEM) }) {
            session,
            server in
            await expectRejected(session, server)
        }
    }

    @Test func aCertificateForAnotherHostIsRejectedUnlessDomainValidationIsOff() async throws {
        let elsewhere = try authority.issue(hosts: ["other.example"])
        try await withTLSServer(elsewhere, { $0.tls.default.trustRoots = .pem(authority.certificatePEM) }) {
            session,
            server in
            await expectRejected(session, server)
        }
        try await withTLSServer(
            elsewhere,
            {
                $0.tls.default = TLSPolicy(trustRoots: .pem(authority.certificatePEM), validatesDomainName: false)
            }
        ) { session, _ in
            try await expectAccepted(session)
        }
    }

    @Test func allowingInvalidCertificatesAcceptsASelfSignedOneAndSaysSoInTheLog() async throws {
        let logs = CapturedLogs()
        let selfSigned = try TestCertificateAuthority.selfSigned()
        try await withTestServer(tls: .init(identity: selfSigned)) { server in
            try await withSession(
                Configuration {
                    $0.baseURL = server.baseURL
                    $0.logger = logs.logger()
                    $0.tls.default.allowsInvalidCertificates = true
                }
            ) { session in
                try await expectAccepted(session)
                try await expectAccepted(session)
            }
        }
        #expect(logs.all.components(separatedBy: "verification is OFF for localhost").count == 2)  // once per host
    }

    @Test func withVerificationOffAPublicKeyPinAloneDecidesTrust() async throws {
        let selfSigned = try TestCertificateAuthority.selfSigned()
        try await withTLSServer(
            selfSigned,
            {
                $0.tls.default = TLSPolicy(
                    allowsInvalidCertificates: true,
                    pinning: .publicKeys([selfSigned.publicKeyPin])
                )
            }
        ) { session, _ in
            try await expectAccepted(session)
        }
        try await withTLSServer(
            selfSigned,
            {
                $0.tls.default = TLSPolicy(allowsInvalidCertificates: true, pinning: .publicKeys([leaf.publicKeyPin]))
            }
        ) { session, server in
            await expectRejected(session, server, mentioning: "pin mismatch")
        }
    }

    @Test func certificatePinningTrustsOnlyThePinnedCertificates() async throws {
        try await withTLSServer(leaf, { $0.tls.default.pinning = .certificates([authority.certificatePEM]) }) {
            session,
            _ in
            try await expectAccepted(session)
        }
        let stranger = try TestCertificateAuthority(name: "Another CA")
        try await withTLSServer(
            leaf,
            {
                // Even with the real CA among the trust roots, a pin on another certificate rejects the server.
                $0.tls.default = TLSPolicy(
                    trustRoots: .pem(authority.certificatePEM),
                    pinning: .certificates([stranger.certificatePEM])
                )
            }
        ) { session, server in
            await expectRejected(session, server)
        }
        let selfSigned = try TestCertificateAuthority.selfSigned()
        try await withTLSServer(selfSigned, { $0.tls.default.pinning = .certificates([selfSigned.certificatePEM]) }) {
            session,
            _ in
            try await expectAccepted(session)
        }
    }

    @Test func mutualTLSPresentsTheClientCertificate() async throws {
        let clientAuthority = try TestCertificateAuthority(name: "Client CA")
        let client = try clientAuthority.issue(hosts: ["courier-client"], forClient: true)
        let files = try client.write(to: try newTemporaryDirectory(prefix: "courier-tls"), name: "client")
        let trusted = TLSPolicy(trustRoots: .pem(authority.certificatePEM))
        try await withTLSServer(leaf, clientCA: clientAuthority.certificatePEM, { $0.tls.default = trusted }) {
            session,
            server in
            let error = await courierError { _ = try await session.send(Request<Echo>.get("/echo")) }
            #expect(
                error?.code == .tls || error?.code == .connectionClosed || error?.code == .connectionReset,
                "\(String(describing: error))"
            )
            #expect(server.hits("/echo") == 0)
        }
        var withIdentity = trusted
        withIdentity.clientIdentity = ClientIdentity(
            certificateFile: files.certificate,
            privateKeyFile: files.privateKey
        )
        try await withTLSServer(leaf, clientCA: clientAuthority.certificatePEM, { $0.tls.default = withIdentity }) {
            session,
            _ in
            try await expectAccepted(session)
        }
    }

    @Test func perHostPoliciesOverrideTheDefault() async throws {
        try await withTLSServer(
            leaf,
            {
                $0.tls.hosts["LOCALHOST"] = TLSPolicy(
                    trustRoots: .pem(authority.certificatePEM),
                    pinning: .publicKeys([leaf.publicKeyPin])
                )
            }
        ) { session, _ in
            try await expectAccepted(session)
        }
    }

    /// A request's own policy (HLNetworking's security policy per API) checks its host in place of the session's,
    /// for that request alone, both ways: trusting what the session does not, and pinning what the session trusts.
    /// A redirect to another host is checked by the session's policy for that host.
    @Test func aRequestsOwnPolicyChecksItsHostForItAlone() async throws {
        let trusting = TLSPolicy(trustRoots: .pem(authority.certificatePEM))
        try await withTLSServer(leaf, { _ in }) { session, server in
            await expectRejected(session, server, mentioning: "verified")  // the session's policy
            var own = Request<Echo>.get("/echo")
            own.tls = trusting
            let status = try await session.send(own).status
            #expect(status == .ok)
            let beside = await courierError { _ = try await session.send(Request<Echo>.get("/echo")) }
            #expect(beside?.code == .tls, "the request beside it: the session's policy")

            var redirected = Request<Echo>.get(
                "/redirect-to",
                query: ["url": .string("https://127.0.0.1:\(server.port)/echo")]
            )
            redirected.tls = trusting
            let error = await courierError { _ = try await session.send(redirected) }
            #expect(error?.code == .tls && error?.message.contains("127.0.0.1") == true, "\(String(describing: error))")
            #expect(server.hits("/redirect-to") == 1 && server.hits("/echo") == 1)
        }
        let other = try authority.issue()
        try await withTLSServer(leaf, { $0.tls.default = trusting }) { session, server in
            var pinned = Request<Echo>.get("/echo")
            pinned.tls = TLSPolicy(
                trustRoots: .pem(authority.certificatePEM),
                pinning: .publicKeys([other.publicKeyPin])
            )
            let error = await courierError { _ = try await session.send(pinned) }
            #expect(
                error?.code == .tls && error?.message.contains("pin mismatch") == true,
                "\(String(describing: error))"
            )
            #expect(server.hits("/echo") == 0)
            try await expectAccepted(session)
        }
    }

    @Test func courierComputesTheSamePinAsTheCertificateLibrary() throws {
        #expect(try CertificatePinning.publicKeyHash(ofPEM: leaf.certificatePEM) == leaf.publicKeyPin)
        #expect(throws: CourierError.self) { try CertificatePinning.publicKeyHash(ofPEM: "not a certificate") }
    }

    /// How a request reaches a host mapped to an address: AsyncHTTPClient's own connection over HTTP/1.1 or
    /// HTTP/2, the relay that checks public-key pins, or a WebSocket's connection.
    enum MappedRoad: String, CaseIterable, Sendable {
        case http1, http2, pinned, webSocket
    }

    /// A host mapped to an address (`hostAddresses`, curl's `--resolve`) is checked against its own name: a
    /// certificate that names only the address (and `localhost`) is refused as curl refuses it (SwiftNIO SSL alone
    /// matched its IP entry against the address it connected to), and one that names the host is accepted.
    @Test(arguments: MappedRoad.allCases)
    func aMappedHostIsCheckedAgainstItsNameNotTheAddress(_ road: MappedRoad) async throws {
        for (hosts, isAccepted) in [(["localhost", "127.0.0.1"], false), (["other.test"], true)] {
            let identity = try authority.issue(hosts: hosts)
            try await withTestServer(tls: .init(identity: identity, http2: road == .http2)) { server in
                var policy = TLSPolicy(trustRoots: .pem(authority.certificatePEM))
                if road == .pinned { policy.pinning = .publicKeys([identity.publicKeyPin]) }
                let configuration = Configuration {
                    $0.hostAddresses = ["other.test": "127.0.0.1"]
                    $0.tls.default = policy
                }
                try await withSession(configuration) { session in
                    let url = "https://other.test:\(server.port)"
                    var failure: CourierError?
                    do {
                        if road == .webSocket {
                            try await session.webSocket(.get("wss://other.test:\(server.port)/ws/echo")) { _ in }
                        } else {
                            _ = try await session.send(Request<Data>.get(url + "/echo"))
                        }
                    } catch let error as CourierError {
                        failure = error
                    }
                    if let error = failure {
                        #expect(!isAccepted, "\(road): \(error)")
                        #expect(error.code == .tls && error.isUntrustedCertificate, "\(road): \(error)")
                        #expect(error.message.contains("other.test"), "\(error.message)")
                        #expect(server.hits("/echo") == 0 && server.hits("/ws/echo") == 0)
                    } else {
                        #expect(isAccepted, "\(road) accepted a certificate for \(hosts)")
                        #expect(server.counter("h2-connections") == (road == .http2 ? 1 : 0))
                    }
                }
            }
        }
    }
}
