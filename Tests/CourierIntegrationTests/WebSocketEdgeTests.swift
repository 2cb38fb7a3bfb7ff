import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@Suite("WebSockets over TLS with pins and through HTTP and SOCKS5 proxies, as the session's other calls go")
struct WebSocketEdgeTests {
    let authority: TestCertificateAuthority
    let leaf: TestIdentity

    init() throws {
        authority = try TestCertificateAuthority()
        leaf = try authority.issue()
    }

    /// Echoes one text message over `path` under `configure`, against a server speaking TLS when `tls`.
    private func echoed(
        tls: Bool,
        _ configure: @escaping (inout Configuration) -> Void = { _ in },
        path: String = "/ws/echo"
    ) async throws -> (answer: WebSocketMessage?, server: TestServer) {
        try await withServerSession(tls: tls ? .init(identity: leaf) : nil, configure) { session, server in
            let answer = try await session.webSocket(.get(path)) { socket in
                try await socket.send("over the edge")
                for try await message in socket { return Optional(message) }
                return nil
            }
            return (answer, server)
        }
    }

    @Test func wssWithTheRightPinOpensAndAWrongPinSendsNothing() async throws {
        let pinned = TLSPolicy(
            trustRoots: .pem(authority.certificatePEM),
            pinning: .publicKeys(["sha256/" + leaf.publicKeyPin])
        )
        let (answer, _) = try await echoed(tls: true) { $0.tls.default = pinned }
        #expect(answer == .text("over the edge"))

        let other = try authority.issue()
        let wrong = TLSPolicy(trustRoots: .pem(authority.certificatePEM), pinning: .publicKeys([other.publicKeyPin]))
        try await withServerSession(tls: .init(identity: leaf), { $0.tls.default = wrong }) { session, server in
            let error = await courierError { try await session.webSocket(.get("/ws/echo")) { _ in } }
            #expect(error?.code == .tls && error?.message.contains("pin mismatch for localhost") == true)
            #expect(server.totalHits == 0, "no byte of the handshake reached the server")
        }
        // And an untrusted certificate is refused as for any other call.
        try await withServerSession(tls: .init(identity: leaf)) { session, server in
            let error = await courierError { try await session.webSocket(.get("/ws/echo")) { _ in } }
            #expect(error?.code == .tls && error?.isUntrustedCertificate == true && server.totalHits == 0)
        }
    }

    @Test func throughAnHTTPProxyWithCredentials() async throws {
        try await withTestProxy(.http(credentials: ("ada", "s3cret"))) { proxy in
            let through = Proxy.http(
                host: "127.0.0.1",
                port: proxy.port,
                credentials: .init(username: "ada", password: "s3cret")
            )
            let (answer, server) = try await echoed(tls: false) { $0.proxies = ProxySettings(all: through) }
            #expect(answer == .text("over the edge"))
            #expect(proxy.tunnels == ["127.0.0.1:\(server.port)"])
            #expect(server.requests("/ws/echo").first?.header("proxy-authorization") == nil)

            let wrong = Proxy.http(
                host: "127.0.0.1",
                port: proxy.port,
                credentials: .init(username: "ada", password: "no")
            )
            try await withServerSession({ $0.proxies = ProxySettings(all: wrong) }) { session, server in
                let error = await courierError { try await session.webSocket(.get("/ws/echo")) { _ in } }
                #expect(error?.code == .connectionFailed && error?.message.contains("407") == true)
                #expect(error?.description.contains("YWRhOm5v") == false, "no credentials in the message")
                #expect(server.totalHits == 0)
            }
        }
    }

    @Test func wssThroughASOCKS5ProxyWithCredentialsAndPins() async throws {
        try await withTestProxy(.socks5(credentials: ("ada", "s0cks"))) { proxy in
            let socks = Proxy.socks5(
                host: "127.0.0.1",
                port: proxy.port,
                credentials: .init(username: "ada", password: "s0cks")
            )
            let pinned = TLSPolicy(
                trustRoots: .pem(authority.certificatePEM),
                pinning: .publicKeys([leaf.publicKeyPin])
            )
            let (answer, server) = try await echoed(tls: true) {
                $0.proxies = ProxySettings(all: socks)
                $0.tls.default = pinned
            }
            #expect(answer == .text("over the edge"))
            #expect(proxy.tunnels == ["localhost:\(server.port)"])
        }
    }

    @Test func hostAddressesSendTheConnectionElsewhereAndKeepTheName() async throws {
        try await withTestServer { server in
            try await withSession(Configuration { $0.hostAddresses = ["chat.example": "127.0.0.1"] }) { session in
                let answer = try await session.webSocket(.get("ws://chat.example:\(server.port)/ws/echo")) { socket in
                    try await socket.send("renamed")
                    for try await message in socket { return Optional(message) }
                    return nil
                }
                #expect(answer == .text("renamed"))
                #expect(server.requests("/ws/echo").first?.header("host") == "chat.example:\(server.port)")
            }
        }
    }

    @Test func aRefusedConnectionAndAnUnresolvableHostAreTyped() async throws {
        try await withSession { session in
            let refused = await courierError { try await session.webSocket(.get("ws://127.0.0.1:1/")) { _ in } }
            #expect(refused?.code == .connectionFailed)
            let unresolved = await courierError {
                try await session.webSocket(.get("ws://no-such-host.invalid/")) { _ in }
            }
            #expect(unresolved?.code == .connectionFailed && unresolved?.isUnresolvedHost == true)
        }
    }
}
