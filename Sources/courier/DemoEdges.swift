import Courier
import CourierTesting
import HTTPTypes
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DemoTour {
    /// The network edges: a public-key pin checked on the connection itself, HTTP/2 multiplexing, cookies, a
    /// proxy with credentials, a WebSocket, and reachability of a port that closes. Certificates are made on the spot.
    mutating func edgeSteps() async throws {
        let server = self.server
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issue()
        let tlsServer = try await TestServer.start(tls: .init(identity: leaf, http2: true))
        defer { Task { await tlsServer.shutdown() } }
        let trusted = TLSPolicy(trustRoots: .pem(authority.certificatePEM))

        await check("A public-key pin is checked on the connection that carries the request") {
            var pinned = trusted
            pinned.pinning = .publicKeys([leaf.publicKeyPin])
            let ok = try await withSession(Configuration { $0.tls.default = pinned }) { session in
                try await session.send(Request<Data>.get(tlsServer.url("/echo").absoluteString)).status
            }
            pinned.pinning = .publicKeys([try authority.issue().publicKeyPin])
            let refused = await Self.failure {
                // The mismatch is also logged as a warning; the tour prints the error itself instead.
                try await withSession(
                    Configuration {
                        $0.tls.default = pinned
                        $0.logger.logLevel = .error
                    }
                ) { session in
                    _ = try await session.send(Request<Data>.get(tlsServer.url("/echo?wrong").absoluteString))
                }
            }
            return (
                ok.code == 200 && refused?.code == .tls && tlsServer.hits("/echo") == 1,
                "right pin: HTTP \(ok.code); wrong pin: \(refused?.description ?? "accepted!") — the server saw \(tlsServer.hits("/echo")) request"
            )
        }
        await check("HTTP/2 through ALPN: 32 concurrent requests share one connection") {
            try await withSession(Configuration { $0.tls.default = trusted }) { session in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for index in 0..<32 {  // distinct URLs: identical ones would share one call
                        group.addTask {
                            _ = try await session.send(
                                Request<Data>.get(tlsServer.url("/small?n=\(index)").absoluteString)
                            )
                        }
                    }
                    try await group.waitForAll()
                }
            }
            let connections = tlsServer.counter("h2-connections")
            return (
                connections <= 2 && tlsServer.counter("h2-streams") >= 32,
                "\(tlsServer.counter("h2-streams")) streams over \(connections) HTTP/2 connection\(connections == 1 ? "" : "s")"
            )
        }
        await check("A cookie the server sets goes back with the next request") {
            let jar = try CookieJar()
            let cookie = try await withSession(
                Configuration {
                    $0.baseURL = server.baseURL
                    $0.cookieJar = jar
                }
            ) { session in
                _ = try await session.send(Request<Data>.get("/set-cookies", query: ["session": "abc123"]))
                return try await session.send(Request<Data>.get("/echo")).body
            }
            let sent = String(decoding: cookie, as: UTF8.self).contains("session=abc123")
            return (sent, "jar holds \(await jar.all.map { "\($0.name) for \($0.domain)" }), sent back: \(sent)")
        }
        await check("An HTTP proxy with credentials tunnels the request") {
            try await withTestProxy(.http(credentials: ("demo", "secret"))) { proxy in
                let through = Proxy.http(
                    host: "127.0.0.1",
                    port: proxy.port,
                    credentials: .init(username: "demo", password: "secret")
                )
                let status = try await withSession(Configuration { $0.proxies = ProxySettings(all: through) }) {
                    session in
                    try await session.send(Request<Data>.get(server.url("/small").absoluteString)).status
                }
                return (
                    status.code == 200 && proxy.tunnels.count == 1,
                    "HTTP \(status.code) through CONNECT tunnels to \(proxy.tunnels)"
                )
            }
        }
        await check("A WebSocket through the session: permessage-deflate echoes, then the server's close") {
            var options = WebSocketOptions()
            options.compression = true
            let said = try await withSession(Configuration { $0.baseURL = server.baseURL }) { session in
                let echoed = try await session.webSocket(.get("/ws/echo"), options: options) {
                    socket -> (WebSocketMessage?, Bool) in
                    try await socket.send("hello over one connection")
                    for try await message in socket { return (message, socket.isCompressed) }
                    return (nil, false)
                }
                let closed = try await session.webSocket(.get("/ws/close?code=4001&reason=bye")) { socket in
                    for try await _ in socket {}
                    return socket.closed
                }
                return (echoed, closed)
            }
            let (echo, closed) = said
            return (
                echo.0 == .text("hello over one connection") && echo.1 && closed?.code.rawValue == 4001,
                "echo \(echo.0.map { "\($0)" } ?? "none") (deflated: \(echo.1)); then \(closed?.description ?? "no close")"
            )
        }
        await check("Reachability follows a port that closes") {
            let closing = try await TestServer.start()
            let monitor = ReachabilityMonitor(host: "127.0.0.1", port: closing.port)
            let before = await monitor.check()
            await closing.shutdown()
            let after = await monitor.check()
            return (
                before == .reachable(.loopback) && after == .notReachable,
                "while open: \(before); after closing: \(after)"
            )
        }
    }
}
