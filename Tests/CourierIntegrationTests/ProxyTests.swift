import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@Suite("Requests through HTTP and SOCKS proxies on loopback")
struct ProxyTests {
    private func echo(through proxy: Proxy, to server: TestServer, tls: TLSPolicy = .standard) async throws -> Echo {
        try await withSession(
            Configuration {
                $0.proxies = ProxySettings(all: proxy)
                $0.tls.default = tls
            }
        ) { session in
            try await session.send(Request<Echo>.get(server.url("/echo").absoluteString, query: ["via": "proxy"])).value
        }
    }

    @Test func anHTTPProxyWithCredentialsTunnelsTheRequest() async throws {
        try await withTestProxy(.http(credentials: ("ada", "s3cret"))) { proxy in
            try await withTestServer { server in
                let credentials = Proxy.Credentials(username: "ada", password: "s3cret")
                let echo = try await echo(
                    through: .http(host: "127.0.0.1", port: proxy.port, credentials: credentials),
                    to: server
                )
                #expect(echo.query == ["via": "proxy"])
                #expect(echo.header("proxy-authorization") == nil)  // the credentials went to the proxy, not the server
                #expect(proxy.tunnels == ["127.0.0.1:\(server.port)"])
            }
        }
    }

    @Test func wrongCredentialsAreATypedErrorAndReachNothing() async throws {
        try await withTestProxy(.http(credentials: ("ada", "s3cret"))) { proxy in
            try await withTestServer { server in
                let wrong = Proxy.http(
                    host: "127.0.0.1",
                    port: proxy.port,
                    credentials: .init(username: "ada", password: "nope")
                )
                let error = await courierError { _ = try await echo(through: wrong, to: server) }
                #expect(error?.code == .connectionFailed)
                #expect(error?.message.contains("407") == true)
                #expect(error?.description.contains("nope") == false)
                #expect(server.totalHits == 0 && proxy.refusals == 1)
            }
        }
    }

    @Test func httpsGoesThroughTheTunnelWithVerificationIntact() async throws {
        let authority = try TestCertificateAuthority()
        try await withTestProxy(.http(credentials: nil)) { proxy in
            try await withTestServer(tls: .init(identity: try authority.issue())) { server in
                let echo = try await echo(
                    through: .http(host: "127.0.0.1", port: proxy.port),
                    to: server,
                    tls: TLSPolicy(trustRoots: .pem(authority.certificatePEM))
                )
                #expect(echo.path == "/echo")
                #expect(proxy.tunnels == ["localhost:\(server.port)"])
                // Public-key pins need a direct connection: refused before anything is sent, not silently unproxied.
                let pinned = TLSPolicy(
                    trustRoots: .pem(authority.certificatePEM),
                    pinning: .publicKeys([String(repeating: "A", count: 43) + "="])
                )
                let error = await courierError {
                    _ = try await self.echo(
                        through: .http(host: "127.0.0.1", port: proxy.port),
                        to: server,
                        tls: pinned
                    )
                }
                #expect(error?.code == .tls && error?.message.contains("through the HTTP proxy") == true)
                #expect(server.hits("/echo") == 1)
            }
        }
    }

    @Test func aSOCKS5ProxyTunnelsTheRequest() async throws {
        try await withTestProxy(.socks5(credentials: nil)) { proxy in
            try await withTestServer { server in
                let echo = try await echo(through: .socks5(host: "127.0.0.1", port: proxy.port), to: server)
                #expect(echo.query == ["via": "proxy"])
                #expect(proxy.tunnels == ["127.0.0.1:\(server.port)"])
            }
        }
    }

    @Test func aSOCKS5ProxyWithCredentialsForHTTPAndPinnedHTTPS() async throws {
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issue()
        try await withTestProxy(.socks5(credentials: ("ada", "s0cks"))) { proxy in
            let socks = Proxy.socks5(
                host: "127.0.0.1",
                port: proxy.port,
                credentials: .init(username: "ada", password: "s0cks")
            )
            try await withTestServer { server in
                let echo = try await echo(through: socks, to: server)
                #expect(echo.query == ["via": "proxy"] && echo.header("host") == "127.0.0.1:\(server.port)")
            }
            try await withTestServer(tls: .init(identity: leaf)) { server in
                // Public-key pins and SOCKS credentials together: the relay does both on the one connection.
                let pinned = TLSPolicy(
                    trustRoots: .pem(authority.certificatePEM),
                    pinning: .publicKeys([leaf.publicKeyPin])
                )
                let echo = try await echo(through: socks, to: server, tls: pinned)
                #expect(echo.path == "/echo")
                let wrongPin = TLSPolicy(
                    trustRoots: .pem(authority.certificatePEM),
                    pinning: .publicKeys([try authority.issue().publicKeyPin])
                )
                let error = await courierError { _ = try await self.echo(through: socks, to: server, tls: wrongPin) }
                #expect(error?.code == .tls && error?.message.contains("pin mismatch") == true)
                #expect(server.hits("/echo") == 1)
            }
            #expect(proxy.tunnels.count == 3)
            try await withTestServer { server in
                let wrong = Proxy.socks5(
                    host: "127.0.0.1",
                    port: proxy.port,
                    credentials: .init(username: "ada", password: "nope")
                )
                let error = await courierError { _ = try await echo(through: wrong, to: server) }
                #expect(error?.code == .connectionFailed && error?.message.contains("refused the credentials") == true)
                #expect(error?.description.contains("nope") == false)
                #expect(server.totalHits == 0)
            }
        }
    }

    @Test func aProxyThatWantsCredentialsGivenNoneSaysSo() async throws {
        try await withTestServer { server in
            let url = server.url("/echo").absoluteString
            try await withTestProxy(.socks5(credentials: ("ada", "s0cks"))) { proxy in
                // AsyncHTTPClient's own SOCKS client goes without credentials: its refusal is put in words too.
                let error = await courierError {
                    _ = try await echo(through: .socks5(host: "127.0.0.1", port: proxy.port), to: server)
                }
                #expect(error?.isProxyRefusal == true, "\(String(describing: error))")
                #expect(
                    error?.message == "the SOCKS5 proxy 127.0.0.1:\(proxy.port) wants credentials and none were given"
                )
                let run = try await CLI.run(["get", url, "--proxy", "socks5://127.0.0.1:\(proxy.port)"])
                #expect(run.status == 97, "\(run.stderr)")
                #expect(run.stderr.contains("the SOCKS5 proxy 127.0.0.1:\(proxy.port) wants credentials"))
                let wrong = try await CLI.run(["get", url, "--proxy", "socks5://ada:nope@127.0.0.1:\(proxy.port)"])
                #expect(wrong.status == 97 && wrong.stderr.contains("refused the credentials"), "\(wrong.stderr)")
                #expect(!wrong.stderr.contains("nope"))
            }
            try await withTestProxy(.http(credentials: ("ada", "pw"))) { proxy in
                let run = try await CLI.run(["get", url, "--proxy", "http://127.0.0.1:\(proxy.port)"])
                #expect(run.status == 97, "\(run.stderr)")
                #expect(
                    run.stderr.contains("the HTTP proxy 127.0.0.1:\(proxy.port) wants credentials (407")
                        && run.stderr.contains("none were given"),
                    "\(run.stderr)"
                )
                let wrong = try await CLI.run(["get", url, "--proxy", "http://ada:nope@127.0.0.1:\(proxy.port)"])
                #expect(wrong.status == 97 && wrong.stderr.contains("refused the credentials"), "\(wrong.stderr)")
            }
            #expect(server.totalHits == 0)
        }
    }

    @Test func aProxyThatIsDownFailsToConnect() async throws {
        try await withTestServer { server in
            let error = await courierError {
                _ = try await echo(through: .http(host: "127.0.0.1", port: 9), to: server)
            }
            #expect(error?.code == .connectionFailed)
            #expect(server.totalHits == 0)
        }
    }

    @Test func theCLIGoesThroughTheProxyItIsGiven() async throws {
        try await withTestProxy(.http(credentials: ("ada", "pw"))) { proxy in
            try await withTestServer { server in
                let url = server.url("/echo").absoluteString
                let through = try await CLI.run(["get", url, "--proxy", "http://ada:pw@127.0.0.1:\(proxy.port)"])
                #expect(through.status == 0, "\(through.stderr)")
                #expect(proxy.tunnels.count == 1)
                let refused = try await CLI.run(["get", url, "--proxy", "http://ada:wrong@127.0.0.1:\(proxy.port)"])
                #expect(refused.status != 0 && refused.stderr.contains("407") && !refused.stderr.contains("wrong"))
                let bad = try await CLI.run(["get", url, "--proxy", "ftp://ada:wrong@proxy"])
                #expect(
                    bad.status != 0 && bad.stderr.contains("use http://, socks5://") && !bad.stderr.contains("wrong")
                )
                #expect(server.hits("/echo") == 1)
            }
        }
    }
}
