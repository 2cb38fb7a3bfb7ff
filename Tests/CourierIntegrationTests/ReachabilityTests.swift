import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@Suite("Reachability by probing a loopback port that opens and closes")
struct ReachabilityTests {
    /// A loopback port nothing listens on (a server's, after it stopped).
    private func closedPort() async throws -> Int {
        let server = try await TestServer.start()
        await server.shutdown()
        return server.port
    }

    @Test func statusFollowsThePortAndTheStreamReplaysThenReportsChanges() async throws {
        let server = try await TestServer.start()
        let monitor = ReachabilityMonitor(host: "127.0.0.1", port: server.port, interval: .milliseconds(50))
        #expect(await monitor.status == .unknown)
        var updates = await monitor.updates().makeAsyncIterator()
        #expect(await updates.next() == .unknown)
        #expect(await monitor.check() == .reachable(.loopback))
        #expect(await monitor.isReachable)
        #expect(await updates.next() == .reachable(.loopback))
        await server.shutdown()
        await monitor.start()
        #expect(await updates.next() == .notReachable)
        let again = try await TestServer.start(port: server.port)
        #expect(await updates.next() == .reachable(.loopback))
        await monitor.stop()
        #expect(await updates.next() == nil)  // stopped: the stream ends
        await again.shutdown()
    }

    @Test func listeningPerDomainAndStoppingIt() async throws {
        try await withTestServer { server in
            let reachability = Reachability(interval: .milliseconds(50))
            var statuses = await reachability.listen(to: server.url("/")).makeAsyncIterator()
            var first = await statuses.next()
            if first == .unknown { first = await statuses.next() }
            #expect(first == .reachable(.loopback))
            #expect(await reachability.status(of: server.url("/anything")) == .reachable(.loopback))
            await reachability.stopListening(to: server.url("/"))
            #expect(await statuses.next() == nil)
            #expect(await reachability.status(of: server.url("/")) == .unknown)
        }
    }

    @Test func aSessionWatchesItsBaseURLByDefault() async throws {
        try await withServerSession { session, server in
            let monitor = try session.reachabilityMonitor(interval: .milliseconds(50))
            #expect(monitor.host == "127.0.0.1" && monitor.port == server.port)
            #expect(await monitor.check() == .reachable(.loopback))
            #expect(await monitor.isReachableViaWiFi == false)
            #expect(await monitor.isReachableViaWWAN == false)
        }
        _ = try await withSession { session in
            #expect(throws: CourierError.self) { try session.reachabilityMonitor() }
        }
    }

    @Test func requestsWaitForConnectivityWhenAsked() async throws {
        let port = try await closedPort()
        let url = "http://127.0.0.1:\(port)/echo"
        // Without waiting: a refused connection fails at once.
        try await withSession { session in
            let error = await courierError { _ = try await session.send(Request<Echo>.get(url)) }
            #expect(error?.code == .connectionFailed)
        }
        try await withSession(Configuration { $0.waitsForConnectivity = .seconds(20) }) { session in
            async let echo = session.send(Request<Echo>.get(url))
            try await Task.sleep(for: .milliseconds(400))
            let server = try await TestServer.start(port: port)
            #expect(try await echo.value.path == "/echo")
            #expect(server.hits("/echo") == 1)
            await server.shutdown()
        }
    }

    @Test func theWaitIsBounded() async throws {
        let port = try await closedPort()
        try await withSession(Configuration { $0.waitsForConnectivity = .milliseconds(600) }) { session in
            let start = ContinuousClock.now
            let error = await courierError {
                _ = try await session.send(Request<Echo>.get("http://127.0.0.1:\(port)/"))
            }
            #expect(error?.code == .offline)
            #expect(error?.message.contains("still unreachable") == true)
            #expect(ContinuousClock.now - start < .seconds(10))
        }
    }

    @Test func theCLIReportsReachabilityAndExitsNonZeroWhenUnreachable() async throws {
        try await withTestServer { server in
            let up = try await CLI.run(["reachability", "127.0.0.1:\(server.port)"])
            #expect(up.status == 0 && up.stdout == "127.0.0.1:\(server.port): reachable via loopback\n", "\(up)")
            let watched = try await CLI.run(
                ["reachability", server.baseURL.absoluteString, "--watch", "--interval", "0.2"],
                killAfter: .seconds(2),
                signal: SIGTERM
            )
            #expect(watched.stdout.contains("reachable via loopback"), "\(watched)")
        }
        let down = try await CLI.run(["reachability", "127.0.0.1:\(try await closedPort())"])
        #expect(down.status == 1 && down.stdout.contains("not reachable"))
        let bad = try await CLI.run(["reachability", "host:99999"])
        #expect(bad.status == 1 && bad.stderr.contains("is not HOST[:PORT] or a URL"))
    }
}
