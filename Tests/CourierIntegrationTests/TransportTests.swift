import AsyncHTTPClient
import Courier
import CourierTestSupport
import CourierTesting
import CourierURLSession
import Foundation
import HTTPTypes
import NIOCore
import NIOPosix
import Testing

@Suite("Transports", .timeLimit(.minutes(1)))
struct TransportTests {
    @Test func urlSessionTransportRunsTheSameRequests() async throws {
        try await withServerSession(transport: URLSessionTransport()) { session, server in
            let echo = try await session.send(Request<Echo>.post("/echo", body: .json(["a": 1])).query(["q": "1"]))
                .value
            #expect(echo.method == "POST" && echo.body == #"{"a":1}"# && echo.query == ["q": "1"])
            let bytes = try await session.send(Request<Data>.get("/bytes/200000")).value
            #expect(bytes == ServerFiles.data(count: 200_000))
            let redirected = try await session.send(Request<Echo>.get("/redirect/2")).value
            #expect(redirected.path == "/redirect/0")
            let gzip = try await session.send(Request<[String: ParameterValue]>.get("/gzip")).value
            #expect(gzip["count"] == 200)
            let status = await courierError { _ = try await session.send(Request<Data>.get("/status/418")) }
            #expect(status?.status?.code == 418)
            let timeout = await courierError {
                _ = try await session.send(Request<Data>.get("/delay/3000").timeout(.milliseconds(300)))
            }
            #expect(timeout?.code == .timeout)
        }
    }

    @Test func urlSessionTransportSendsAStreamBodyFromATemporaryFile() async throws {
        func spooled() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path).filter {
                $0.hasPrefix("courier-upload-")
            }
        }
        let before = try spooled()
        try await withServerSession(transport: URLSessionTransport()) { session, server in
            // Known length and unknown length arrive whole, and the temporary file goes with the exchange.
            for length in [false, true] {
                let chunks = SlowChunks(count: 40, size: 64 * 1024, interval: .zero)
                let body = RequestBody.stream(chunks, length: length ? chunks.length : nil)
                let echo = try await session.send(Request<Echo>.post("/echo", body: body)).value
                #expect(echo.bodyLength == Int(chunks.length) && chunks.taken == chunks.count)
            }
            // A stream that fails stops the request before anything is sent, and leaves no file behind.
            struct Broken: Error {}
            let failing = AsyncThrowingStream<ByteBuffer, any Error> { $0.finish(throwing: Broken()) }
            let error = await courierError {
                _ = try await session.send(Request<Data>.post("/echo", body: .stream(failing)))
            }
            #expect(error?.code == .transport && error?.underlying is Broken)
            // A streamed response, which no pool watches, still ends at the transport's own deadline.
            let start = ContinuousClock.now
            let stream = await courierError {
                _ = try await session.stream(Request<Data>.get("/delay/3000").timeout(.milliseconds(300)))
            }
            #expect(stream?.code == .timeout && stream?.timeoutKind == .total && start.duration(to: .now) < .seconds(2))
            // A body that never ends is still being spooled when the deadline comes: the deadline ends the spooling.
            let endless = AsyncStream<ByteBuffer> { _ in }
            let spooling = ContinuousClock.now
            let stalled = await courierError {
                _ = try await session.send(
                    Request<Data>.post("/echo", body: .stream(endless)).timeout(.milliseconds(300))
                )
            }
            // Bounded loosely: the check is that the deadline ends the spooling, not how fast a busy machine does it.
            #expect(stalled?.code == .timeout && spooling.duration(to: .now) < .seconds(10))
            #expect(server.hits("/echo") == 2)
        }
        #expect(try spooled() == before)
    }

    @Test func urlSessionTransportRoundsReadTimeoutsUpToWholeSeconds() async throws {
        #expect(
            URLSessionTransport.interval(.milliseconds(500)) == 1,
            "Linux's URLSession counts whole seconds; 0.5 s would fire at once"
        )
        #expect(URLSessionTransport.interval(.milliseconds(1500)) == 2)
        #expect(URLSessionTransport.interval(.seconds(2)) == 2)
        #expect(URLSessionTransport.interval(.zero) == 1, "zero would mean URLSession's own default")
        try await withServerSession(transport: URLSessionTransport(), { $0.timeouts.readIdle = .milliseconds(800) }) {
            session,
            _ in
            // 800 ms once went out as 1 ms, and the answer after 100 ms timed out.
            let answer = try await session.send(Request<Data>.get("/delay/100"))
            #expect(answer.status == .ok)
            let start = ContinuousClock.now
            let stalled = await courierError {
                _ = try await session.send(Request<Data>.get("/delay/5000").timeout(.seconds(10)))
            }
            #expect(stalled?.code == .timeout)
            #expect(start.duration(to: .now) < .seconds(4), "the read-idle timeout, not the total, ended the wait")
        }
    }

    /// Courier's connections read up to 256 KiB at a time (SwiftNIO's default stops at 64 KiB), set before a
    /// caller's own connection initialiser runs, which still runs; a large body arrives whole.
    @Test func asyncHTTPClientConnectionsReadUpTo256KiB() async throws {
        let seen = Locked<[Int]>([])
        var configuration = HTTPClient.Configuration()
        configuration.http1_1ConnectionDebugInitializer = recordingReadLimits(into: seen)
        let client = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            configuration: AsyncHTTPClientTransport.preparedConfiguration(configuration)
        )
        try await withServerSession(transport: AsyncHTTPClientTransport(client: client)) { session, _ in
            let body = try await session.send(Request<Data>.get("/bytes/3000000")).value
            #expect(body == ServerFiles.data(count: 3_000_000))
        }
        try await client.shutdown()
        #expect(seen.withLock { $0 } == [256 * 1024])
    }

    @Test func stubTransportAnswersWithoutSockets() async throws {
        let stub = StubTransport { request in
            request.url.path() == "/users/1" ? .json(#"{"id":1}"#) : .status(.notFound)
        }
        try await withSession(Configuration { $0.baseURL = URL(string: "https://api.example.com") }, transport: stub) {
            session in
            struct User: Decodable, Sendable { var id: Int }
            let user = try await session.send(Request<User>.get("/users/1")).value
            #expect(user.id == 1)
            let missing = await courierError { _ = try await session.send(Request<User>.get("/users/2")) }
            #expect(missing?.status == .notFound)
        }
        #expect(
            stub.requests.map(\.url.absoluteString) == [
                "https://api.example.com/users/1", "https://api.example.com/users/2",
            ]
        )
    }
}
