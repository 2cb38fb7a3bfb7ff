import AsyncHTTPClient
import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import NIOPosix
import NIOSSL
import Testing

@Suite("HTTP/2 through ALPN against the loopback server speaking h2")
struct HTTP2Tests {
    let authority: TestCertificateAuthority
    let leaf: TestIdentity

    init() throws {
        authority = try TestCertificateAuthority()
        leaf = try authority.issue()
    }

    private func withH2Server(
        _ configure: @escaping (inout Configuration) -> Void,
        _ body: (Session, TestServer) async throws -> Void
    ) async throws {
        let trust = TLSPolicy(trustRoots: .pem(authority.certificatePEM))
        try await withServerSession(
            tls: .init(identity: leaf, http2: true),
            {
                $0.tls.default = trust
                configure(&$0)
            },
            body
        )
    }

    @Test func manyConcurrentRequestsMultiplexOnOneConnection() async throws {
        try await withH2Server({ _ in }) { session, server in
            _ = try await session.send(Request<Echo>.get("/echo"))  // the connection, and what ALPN chose
            try await withThrowingTaskGroup(of: Echo.self) { group in
                for index in 0..<64 {
                    group.addTask {
                        try await session.send(Request<Echo>.post("/echo", body: .text("n\(index)"))).value
                    }
                }
                var bodies = Set<String>()
                for try await echo in group { bodies.insert(echo.body) }
                #expect(bodies.count == 64)
            }
            let large = try await session.send(Request<Data>.get("/bytes/3000000")).value
            #expect(large.count == 3_000_000)
            #expect(server.counter("h2-connections") == 1)
            #expect(server.counter("h2-streams") == 66)
        }
    }

    /// A server that serves 10 streams per connection (nginx's `keepalive_requests`) sends `GOAWAY` naming the last
    /// one: the streams in flight above it were not processed and go again on a new connection, POSTs included
    /// (RFC 9113 §8.7), each exactly once, with no retry rule.
    @Test func streamsAGracefulGoAwayLeftUnprocessedGoAgain() async throws {
        let trust = TLSPolicy(trustRoots: .pem(authority.certificatePEM))
        try await withServerSession(
            tls: .init(identity: leaf, http2: true, http2StreamsPerConnection: 10),
            { $0.tls.default = trust }
        ) { session, server in
            try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<80 {
                    group.addTask {
                        let request =
                            index.isMultiple(of: 4)
                            ? Request<Echo>.post("/echo", body: .text("n\(index)"))
                            : Request<Echo>.get("/echo", query: ["n": .string("n\(index)")])
                        let echo = try await session.send(request).value
                        return echo.method == "POST" ? echo.body : echo.query["n"] ?? ""
                    }
                }
                var answers = Set<String>()
                for try await answer in group { answers.insert(answer.replacing("n", with: "")) }
                #expect(answers.count == 80)
            }
            #expect(server.hits("/echo") == 80, "each request processed once")
            // the last connection's GOAWAY may go out just after its last answer
            await eventually("a GOAWAY from each connection") { server.counter("h2-goaways") >= 8 }
            #expect(server.counter("h2-connections") >= 8)
        }
    }

    /// An HTTP/2 connection reads up to 256 KiB at a time too, and the caller's own initialiser still runs.
    @Test func http2ConnectionsReadUpTo256KiB() async throws {
        let seen = Locked<[Int]>([])
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(authority.certificatePEM.utf8)))
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.http2ConnectionDebugInitializer = recordingReadLimits(into: seen)
        let client = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            configuration: AsyncHTTPClientTransport.preparedConfiguration(configuration)
        )
        try await withServerSession(
            tls: .init(identity: leaf, http2: true),
            transport: AsyncHTTPClientTransport(client: client)
        ) { session, server in
            let body = try await session.send(Request<Data>.get("/bytes/3000000")).value
            #expect(body == ServerFiles.data(count: 3_000_000))
            #expect(server.counter("h2-connections") == 1)
        }
        try await client.shutdown()
        #expect(seen.withLock { $0 } == [256 * 1024])
    }

    @Test func http1OnlyNeverNegotiatesHTTP2() async throws {
        try await withH2Server({ $0.httpVersion = .http1Only }) { session, server in
            for _ in 0..<3 { _ = try await session.send(Request<Echo>.get("/echo")) }
            #expect(server.counter("h2-connections") == 0)
            #expect(server.hits("/echo") == 3)
        }
    }

    @Test func errorsAndStatusesTravelOverStreams() async throws {
        try await withH2Server({ _ in }) { session, server in
            let error = await courierError { _ = try await session.send(Request<Data>.get("/status/503")) }
            #expect(error?.status?.code == 503)
            let gzip = try await session.send(Request<Data>.get("/gzip"))
            #expect(!gzip.body.isEmpty)
            #expect(server.counter("h2-connections") == 1)
        }
    }

    @Test func theCLIOffersHTTP2AndCanRefuseIt() async throws {
        let caFile = try newTemporaryDirectory(prefix: "courier-h2").appending(path: "ca.pem")
        try Data(authority.certificatePEM.utf8).write(to: caFile)
        try await withTestServer(tls: .init(identity: leaf, http2: true)) { server in
            let url = server.url("/echo").absoluteString
            let h2 = try await CLI.run(["get", url, "--cacert", caFile.path(percentEncoded: false), "--http2"])
            #expect(h2.status == 0, "\(h2.stderr)")
            #expect(server.counter("h2-streams") == 1)
            let h1 = try await CLI.run(["get", url, "--cacert", caFile.path(percentEncoded: false), "--http1.1"])
            #expect(h1.status == 0, "\(h1.stderr)")
            #expect(server.counter("h2-streams") == 1 && server.hits("/echo") == 2)
            let both = try await CLI.run(["get", url, "--http2", "--http1.1"])
            #expect(both.status != 0 && both.stderr.contains("cannot be combined"))
            // -i prints the head as the server sent it: HTTP/2 has no reason phrase and no Transfer-Encoding.
            let head = try await CLI.run(["get", url, "--cacert", caFile.path(percentEncoded: false), "-i"])
            #expect(head.status == 0 && head.stdout.hasPrefix("HTTP/2 200\r\n"), "\(head.stdout.prefix(200))")
            let fields = head.stdout.components(separatedBy: "\r\n\r\n").first?.lowercased() ?? ""
            #expect(!fields.contains("transfer-encoding") && fields.contains("content-type"), "\(fields)")
        }
    }
}
