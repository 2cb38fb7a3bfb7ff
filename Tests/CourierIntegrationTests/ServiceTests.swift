import AsyncHTTPClient
import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// Courier's long-lived parts as swift-service-lifecycle services: each `run()` lives until graceful shutdown,
/// then finishes or hands back its work; cancellation ends it promptly.
@Suite("Running as services")
struct ServiceTests {
    @Test func aSessionLetsItsRequestsFinishOnGracefulShutdownThenCloses() async throws {
        try await withTestServer { server in
            let session = Session(configuration: Configuration { $0.baseURL = server.baseURL })
            try await testGracefulShutdown { trigger in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await session.run() }
                    async let slow = session.send(Request<Data>.get("/delay/400"))
                    await eventually("the request runs") { await !session.pool.snapshot().isEmpty }
                    trigger.triggerGracefulShutdown()
                    #expect(try await slow.status == .ok, "a request in flight finishes")
                    try await group.waitForAll()  // run() returned
                }
            }
            let closed = await courierError { _ = try await session.send(Request<Data>.get("/small")) }
            #expect(closed?.code == .sessionClosed)
        }
    }

    @Test func cancellingASessionsRunCancelsItsRequestsAtOnce() async throws {
        try await withTestServer { server in
            let session = Session(configuration: Configuration { $0.baseURL = server.baseURL })
            let running = Task { try await session.run() }
            let slow = Task { try await session.send(Request<Data>.get("/slow")) }
            await eventually("the request runs") { await !session.pool.snapshot().isEmpty }
            let start = ContinuousClock.now
            running.cancel()
            try await running.value
            let error = await courierError { _ = try await slow.value }
            #expect(error?.code == .cancelled)
            // What would be wrong is waiting for `/slow`'s minute; a loaded machine may take seconds to get here.
            #expect(ContinuousClock.now - start < .seconds(50))
        }
    }

    @Test func aDownloadManagerPausesAndCheckpointsOnGracefulShutdown() async throws {
        let state = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        try await withDownloads { _, server, directory in
            let size = 400_000
            let source = server.url("/file/\(size)?rate=100000&key=service")
            let target = directory.appendingPathComponent("service.bin")
            try await withSession { session in
                let manager = try DownloadManager(session: session, configuration: .init(stateDirectory: state))
                let download = try await manager.add(source, to: .file(target))
                await testGracefulShutdown { trigger in
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask { try? await manager.run() }
                        await eventually("bytes arrived") { await download.progress.completedBytes > 0 }
                        trigger.triggerGracefulShutdown()
                        await group.waitForAll()
                    }
                }
                #expect(await download.state == .paused)
                #expect(target.partFile.exists && target.resumeRecord.exists)
                // A new manager (a restarted process) continues from the part file.
                let sentBefore = server.counter("file-bytes:service")
                let next = try DownloadManager(session: session, configuration: .init(stateDirectory: state))
                let restored = try #require(await next.restore().first)
                try await next.resume(.download(restored))  // paused by the shutdown, it stays paused until asked
                let file = try await restored.completion()
                #expect(try sha256(of: file) == ServerFiles.sha256(count: size))
                #expect(server.counter("file-bytes:service") - sentBefore < size, "resumed, not fetched again")
            }
        }
    }

    @Test func aReachabilityMonitorStopsAndEndsItsUpdatesOnGracefulShutdown() async throws {
        try await withTestServer { server in
            let monitor = ReachabilityMonitor(host: "127.0.0.1", port: server.port, interval: .milliseconds(50))
            let updates = await monitor.updates()
            await testGracefulShutdown { trigger in
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { try? await monitor.run() }
                    var seen: [ReachabilityStatus] = []
                    for await status in updates {
                        seen.append(status)
                        if status.isReachable { trigger.triggerGracefulShutdown() }
                    }
                    #expect(seen.contains { $0.isReachable }, "the stream ended after the shutdown: \(seen)")
                    await group.waitForAll()
                }
            }
        }
    }

    @Test func aServiceGroupShutsTheSessionDownAfterWhatUsesIt() async throws {
        try await withTestServer { server in
            let session = Session(configuration: Configuration { $0.baseURL = server.baseURL })
            let state = try temporaryDownloadDirectory()
            defer { try? FileManager.default.removeItem(at: state) }
            let manager = try DownloadManager(session: session, configuration: .init(stateDirectory: state))
            let group = ServiceGroup(services: [session, manager], logger: .init(label: "test"))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                let answer = try await session.send(Request<Data>.get("/small"))
                #expect(answer.status == .ok)
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            #expect(
                await courierError { _ = try await session.send(Request<Data>.get("/small")) }?.code == .sessionClosed
            )
        }
    }

    /// A caller's own HTTPClient carries the requests and outlives the session, which does not shut it down.
    @Test func aCallersOwnHTTPClientIsUsedAndNeverShutDown() async throws {
        try await withTestServer { server in
            let client = HTTPClient(
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                configuration: AsyncHTTPClientTransport.preparedConfiguration(HTTPClient.Configuration())
            )
            let session = Session(
                configuration: Configuration { $0.baseURL = server.baseURL },
                transport: AsyncHTTPClientTransport(client: client)
            )
            let redirected = try await session.send(Request<Data>.get("/redirect/1"))
            #expect(redirected.status == .ok && server.hits("/redirect/1") == 1, "the session followed the redirect")
            try await session.shutdown()
            // Still open: the caller's to use and to shut down.
            let direct = try await client.execute(
                HTTPClientRequest(url: server.url("/small").absoluteString),
                timeout: .seconds(5)
            )
            #expect(direct.status == .ok)
            try await client.shutdown()
        }
    }

    /// A caller's own event loop group carries the connections and outlives the session.
    @Test func aCallersOwnEventLoopGroupIsUsedAndNeverShutDown() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        try await withTestServer { server in
            let session = Session(
                configuration: Configuration { $0.baseURL = server.baseURL },
                transport: AsyncHTTPClientTransport(eventLoopGroup: group)
            )
            #expect(try await session.send(Request<Data>.get("/small")).status == .ok)
            try await session.shutdown()
            let loop = group.next()
            #expect(try await loop.submit { 42 }.get() == 42, "the group still runs")
        }
        try await group.shutdownGracefully()
    }
}
