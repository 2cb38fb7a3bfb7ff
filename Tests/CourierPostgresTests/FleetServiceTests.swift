import Courier
import CourierPostgres
import CourierTestSupport
import CourierTesting
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Testing

/// The fleet's database and worker as swift-service-lifecycle services, in one group as a server would run them.
@Suite("The fleet as services", .enabled(if: TestDatabase.isAvailable))
struct FleetServiceTests {
    /// [database, session, worker]: graceful shutdown reaches the worker first, which hands its running job back
    /// while the session and the database are still there; then they close, and the group's run returns.
    @Test func aGracefulShutdownHandsTheWorkersJobsBackBeforeTheDatabaseCloses() async throws {
        try await withQueue { queue, url, server, directory in
            let size = 2_000_000
            let destination = directory.appendingPathComponent("service")
            let id = try await queue.add(server.url("/file/\(size)?rate=200000&key=service"), to: destination)
            let database = try FleetDatabase(url: url, maxConnections: 4)
            let session = Session()
            let worker = try DownloadWorker(
                queue: DownloadQueue(database: database),
                session: session,
                concurrency: 1,
                pollInterval: .milliseconds(100)
            )
            let group = ServiceGroup(services: [database, session, worker], logger: Logger(label: "test"))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                await eventually("the job has begun") { server.counter("file-bytes:service") > 100_000 }
                let start = ContinuousClock.now
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                #expect(ContinuousClock.now - start < .seconds(10))
            }
            let job = try #require(try await queue.job(id))
            #expect(job.state == .queued && job.attempts == 0 && job.worker == nil, "\(job)")
            #expect(FileManager.default.fileExists(atPath: destination.path + ".part"))
            let closed = await courierError {
                _ = try await session.send(Request<Data>.get(server.url("/small").absoluteString))
            }
            #expect(closed?.code == .sessionClosed)
        }
    }

    /// A database run by `withFleetDatabase` works inside the closure and is closed after it.
    @Test func aScopedDatabaseWorksInsideItsClosureAndClosesAfter() async throws {
        try await TestDatabase.withFresh { url in
            let database = try await withFleetDatabase(url: url) { database in
                let answer = try await TestDatabase.execute("SELECT 7", on: database)
                #expect(answer == [7])
                return database
            }
            let after = await courierError {
                _ = try await database.run("after", within: .seconds(2)) { try await $0.query("SELECT 1") }
            }
            #expect(after?.code == .database)
        }
    }
}
