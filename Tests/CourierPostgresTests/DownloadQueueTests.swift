import Courier
import CourierTestSupport
import CourierTesting
import Crypto
import Foundation
import Testing

@testable import CourierPostgres

/// A fresh temporary directory, removed by the caller.
func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-queue-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// Runs `body` with a queue on a fresh database, a loopback server and a shared destination directory.
func withQueue<T>(_ body: (DownloadQueue, String, TestServer, URL) async throws -> T) async throws -> T {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await TestDatabase.withDatabase { database, url in
        try await withTestServer { server in try await body(DownloadQueue(database: database), url, server, directory) }
    }
}

/// A worker with its own database connections and session: one process of a fleet.
func withWorker<T>(
    _ url: String,
    concurrency: Int = 2,
    lease: Duration = .seconds(30),
    _ body: (DownloadWorker) async throws -> T
) async throws -> T {
    let database = try FleetDatabase.opened(url: url, maxConnections: 4)
    let result: Result<T, any Error>
    do {
        result = try await withSession { session in
            let worker = try DownloadWorker(
                queue: DownloadQueue(database: database),
                session: session,
                concurrency: concurrency,
                lease: lease,
                pollInterval: .milliseconds(100)
            )
            return .success(try await body(worker))
        }
    } catch { result = .failure(error) }
    await database.close()
    return try result.get()
}

@Suite(
    "DownloadQueue: jobs shared by workers through PostgreSQL",
    .enabled(if: TestDatabase.isAvailable),
    .timeLimit(.minutes(2))
)
struct DownloadQueueTests {
    @Test func jobsAreClaimedByPriorityThenOrderAndCompleteOnce() async throws {
        try await withQueue { queue, _, server, directory in
            let low = try await queue.add(server.url("/file/10"), to: directory.appendingPathComponent("low"))
            let high = try await queue.add(
                server.url("/file/20"),
                to: directory.appendingPathComponent("high"),
                priority: 5
            )
            let again = try await queue.add(server.url("/file/10"), to: directory.appendingPathComponent("low"))
            #expect(again == low)
            let first = try #require(try await queue.claim(for: "w1", lease: .seconds(30)))
            let second = try #require(try await queue.claim(for: "w2", lease: .seconds(30)))
            #expect(first.id == high && second.id == low && first.attempts == 1)
            #expect(try await queue.claim(for: "w3", lease: .seconds(30)) == nil)
            #expect(try await queue.complete(high, for: "w1", bytes: 20))
            #expect(try await !queue.complete(high, for: "w1", bytes: 20))  // once
            #expect(try await !queue.complete(low, for: "w1", bytes: 10))  // not w1's
            let status = try await queue.status()
            #expect(status.counts[.completed] == 1 && status.counts[.running] == 1 && status.counts[.queued] == 0)
            #expect(status.description.hasPrefix("0 queued, 1 running, 1 completed, 0 failed"))
        }
    }

    @Test func aLeaseThatRunsOutIsClaimedByAnotherAndTheFirstLosesIt() async throws {
        try await withQueue { queue, _, server, directory in
            let id = try await queue.add(server.url("/file/10"), to: directory.appendingPathComponent("f"))
            _ = try await queue.claim(for: "w1", lease: .seconds(1))
            #expect(try await queue.claim(for: "w2", lease: .seconds(30)) == nil)
            try await Task.sleep(for: .milliseconds(1_200))
            let taken = try #require(try await queue.claim(for: "w2", lease: .seconds(30)))
            #expect(taken.id == id && taken.attempts == 2 && taken.worker == "w2")
            let progress = DownloadProgress(completedBytes: 5, totalBytes: 10, bytesPerSecond: 0)
            #expect(try await !queue.renew(id, for: "w1", lease: .seconds(30), progress: progress))
            #expect(try await queue.renew(id, for: "w2", lease: .seconds(30), progress: progress))
            #expect(try await queue.job(id)?.completedBytes == 5)
        }
    }

    @Test func badJobsAreRefusedWithTypedErrors() async throws {
        try await withQueue { queue, _, server, directory in
            let ftp = await courierError {
                try await queue.add(URL(string: "ftp://host/f")!, to: directory.appendingPathComponent("f"))
            }
            #expect(ftp?.code == .invalidURL)
            let folder = await courierError { try await queue.add(server.url("/file/1"), to: directory) }
            #expect(folder?.code == .invalidParameter && folder?.message.contains("the path of a file") == true)
            let attempts = await courierError {
                try await queue.add(server.url("/file/1"), to: directory.appendingPathComponent("g"), maxAttempts: 0)
            }
            #expect(attempts?.code == .invalidParameter)
        }
    }

    @Test func progressOfTheQueueAndOfOneJobAreAsyncSequences() async throws {
        try await withQueue { queue, url, server, directory in
            let id = try await queue.add(
                server.url("/file/600000?rate=400000"),
                to: directory.appendingPathComponent("p")
            )
            try await queue.add(server.url("/file/1000"), to: directory.appendingPathComponent("q"))
            let watched = Task {
                var states: [DownloadJob.State] = []
                for await job in queue.updates(of: id, every: .milliseconds(100)) { states.append(job.state) }
                return states
            }
            let totals = Task {
                var readings: [DownloadQueueStatus] = []
                for await status in queue.progress(every: .milliseconds(100)) {
                    readings.append(status)
                    if status.isSettled { break }
                }
                return readings
            }
            try await withWorker(url, lease: .seconds(1)) { await $0.run(untilSettled: true) }
            let states = await watched.value
            #expect(states.first == .queued || states.first == .running)
            #expect(states.last == .completed && states.contains(.running))
            let readings = await totals.value
            #expect(readings.last?.counts[.completed] == 2 && readings.last?.completedBytes == 601_000)
            #expect(readings.contains { $0.bytesPerSecond > 0 })
        }
    }

    @Test func aMissingTableAndANewerSchemaAreOneClearErrorEach() async throws {
        try await withQueue { queue, url, server, directory in
            try await queue.add(server.url("/file/10"), to: directory.appendingPathComponent("a"))
            _ = try await TestDatabase.withConnection(url) { database in
                try await TestDatabase.execute("DROP TABLE courier_download_jobs", on: database)
            }
            let missing = await courierError { _ = try await queue.jobs() }
            #expect(missing?.code == .database && missing?.message.contains("courier_download_jobs is missing") == true)
            #expect(try await queue.jobs().isEmpty)  // created again, empty
            _ = try await TestDatabase.withConnection(url) { database in
                try await TestDatabase.execute(
                    "UPDATE courier_schema SET version = 7 WHERE component = 'download-queue'",
                    on: database
                )
            }
            let other = try FleetDatabase.opened(url: url)
            let newer = await courierError { try await DownloadQueue(database: other).prepare() }
            #expect(
                newer?.code == .database
                    && newer?.message.contains("newer Courier (schema 7; this one reads 1)") == true
            )
            await other.close()
        }
    }

    @Test func workersDownloadEveryJobExactlyOnceWithItsChecksum() async throws {
        try await withQueue { queue, url, server, directory in
            var expected: [URL: String] = [:]
            for index in 0..<12 {
                let size = 50_000 + index * 1_000
                let destination = directory.appendingPathComponent("file-\(index)")
                expected[destination] = ServerFiles.sha256(count: size)
                try await queue.add(
                    server.url("/file/\(size)?key=job\(index)"),
                    to: destination,
                    checksum: try .sha256(ServerFiles.sha256(count: size))
                )
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<3 {
                    group.addTask { try await withWorker(url) { await $0.run(untilSettled: true) } }
                }
                try await group.waitForAll()
            }
            let jobs = try await queue.jobs()
            #expect(jobs.allSatisfy { $0.state == .completed && $0.attempts == 1 && $0.worker == nil })
            for index in 0..<12 { #expect(server.counter("file:job\(index)") == 1) }
            for (destination, digest) in expected {
                #expect(try sha256Hex(Data(contentsOf: destination)) == digest)
                #expect(!FileManager.default.fileExists(atPath: destination.path + ".part"))
            }
        }
    }

    @Test func failuresAreTypedAndCountedAgainstTheAttempts() async throws {
        try await withQueue { queue, url, server, directory in
            let missing = try await queue.add(
                server.url("/status/404"),
                to: directory.appendingPathComponent("missing")
            )
            let flaky = try await queue.add(
                server.url("/status/503"),
                to: directory.appendingPathComponent("flaky"),
                maxAttempts: 2
            )
            let wrong = try await queue.add(
                server.url("/file/1000"),
                to: directory.appendingPathComponent("wrong"),
                checksum: try .sha256(String(repeating: "0", count: 64))
            )
            try await withWorker(url) { await $0.run(untilSettled: true) }
            let notFound = try #require(try await queue.job(missing))
            #expect(
                notFound.state == .failed && notFound.attempts == 1
                    && notFound.lastError?.hasPrefix("httpStatus") == true
            )
            let unavailable = try #require(try await queue.job(flaky))
            #expect(unavailable.state == .failed && unavailable.attempts == 2)
            let mismatch = try #require(try await queue.job(wrong))
            #expect(mismatch.state == .failed && mismatch.lastError?.hasPrefix("integrity") == true)
            #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("wrong").path))
            // Adding a failed job again queues it again, its attempts reset.
            try await queue.add(server.url("/status/404"), to: directory.appendingPathComponent("missing"))
            let requeued = try await queue.job(missing)
            #expect(requeued?.state == .queued && requeued?.attempts == 0)
        }
    }

    @Test func aFileAlreadyInPlaceCompletesItsJobWithoutADownload() async throws {
        try await withQueue { queue, url, server, directory in
            let done = directory.appendingPathComponent("done")
            try Data(ServerFiles.bytes(offset: 0, count: 3_000)).write(to: done)
            let id = try await queue.add(
                server.url("/file/3000?key=done"),
                to: done,
                checksum: try .sha256(ServerFiles.sha256(count: 3_000))
            )
            let other = directory.appendingPathComponent("other")
            try Data("not the file".utf8).write(to: other)
            let otherID = try await queue.add(
                server.url("/file/3000?key=other"),
                to: other,
                checksum: try .sha256(ServerFiles.sha256(count: 3_000))
            )
            try await withWorker(url) { await $0.run(untilSettled: true) }
            #expect(try await queue.job(id)?.state == .completed && server.counter("file:done") == 0)
            let refused = try #require(try await queue.job(otherID))
            #expect(refused.state == .failed && refused.lastError?.hasPrefix("destinationExists") == true)
            #expect(try String(contentsOf: other, encoding: .utf8) == "not the file")
        }
    }

    @Test func aStoppedWorkerHandsItsJobBackAndTheNextResumesIt() async throws {
        try await withQueue { queue, url, server, directory in
            let size = 400_000
            let destination = directory.appendingPathComponent("slow")
            let id = try await queue.add(
                server.url("/file/\(size)?rate=100000&key=slow"),
                to: destination,
                checksum: try .sha256(ServerFiles.sha256(count: size))
            )
            try await withWorker(url, lease: .milliseconds(1_500)) { worker in
                async let run: Void = worker.run(untilSettled: false)
                try await eventually("the job has 50 kB") { (try await queue.job(id)?.completedBytes ?? 0) > 50_000 }
                await worker.stop()
                await run
            }
            let handedBack = try #require(try await queue.job(id))
            #expect(
                handedBack.state == .queued && handedBack.attempts == 0 && handedBack.worker == nil,
                "\(handedBack)"
            )
            #expect(FileManager.default.fileExists(atPath: destination.path + ".part"))
            try await withWorker(url) { await $0.run(untilSettled: true) }
            #expect(try await queue.job(id)?.state == .completed)
            #expect(try sha256Hex(Data(contentsOf: destination)) == ServerFiles.sha256(count: size))
            #expect(server.counter("file-bytes:slow") < size * 3 / 2)  // resumed, not fetched twice
        }
    }

    @Test func aWorkerThatLosesItsLeaseStopsWriting() async throws {
        try await withQueue { queue, url, server, directory in
            let destination = directory.appendingPathComponent("stolen")
            let id = try await queue.add(server.url("/file/2000000?rate=200000&key=stolen"), to: destination)
            try await withWorker(url, lease: .milliseconds(1_500)) { worker in
                let events = worker.events()
                async let run: Void = worker.run(untilSettled: false)
                try await eventually("the job has begun") { (try await queue.job(id)?.completedBytes ?? 0) > 0 }
                // Another worker took the job over (its lease ran out while this one stalled, say), with a lease of its
                // own: without one, a renewal of this worker late by more than the old lease (a loaded machine) let its
                // other slot claim the expired job back, and the handing back this test waits for never came.
                _ = try await TestDatabase.withConnection(url) { database in
                    try await TestDatabase.execute(
                        """
                        UPDATE courier_download_jobs SET worker = 'thief', lease_until = now() + interval '10 minutes' WHERE id = \(id)
                        """,
                        on: database
                    )
                }
                var handedBack = false
                for await event in events {
                    if case .handedBack(let job) = event, job.id == id {
                        handedBack = true
                        break
                    }
                }
                let size = destination.path + ".part"
                let before = (try? FileManager.default.attributesOfItem(atPath: size)[.size] as? Int) ?? 0
                try await Task.sleep(for: .milliseconds(500))
                let after = (try? FileManager.default.attributesOfItem(atPath: size)[.size] as? Int) ?? 0
                await worker.stop()
                await run
                #expect(handedBack && before == after && before > 0)  // it stopped writing the part file
            }
            let job = try #require(try await queue.job(id))
            #expect(job.worker == "thief" && job.state == .running)  // left to the one that holds it
        }
    }

    @Test func aWorkersOtherSlotNeverClaimsTheJobItRunsWhenItsLeaseRanOut() async throws {
        try await withQueue { queue, url, server, directory in
            let id = try await queue.add(
                server.url("/file/2000000?rate=200000&key=late"),
                to: directory.appendingPathComponent("late")
            )
            try await withWorker(url, concurrency: 2) { worker in
                let events = worker.events()
                async let run: Void = worker.run(untilSettled: false)
                for await event in events {
                    if case .started = event { break }
                }
                // The renewal is late past the lease, as on a loaded machine: the job is claimable, but not by the
                // worker that still runs it (its other slot polls every 100 ms, the renewal comes after 10 s).
                _ = try await TestDatabase.withConnection(url) { database in
                    try await TestDatabase.execute(
                        "UPDATE courier_download_jobs SET lease_until = now() - interval '1 second' WHERE id = \(id)",
                        on: database
                    )
                }
                try await Task.sleep(for: .seconds(1))
                let job = try #require(try await queue.job(id))
                await worker.stop()
                await run
                #expect(job.state == .running && job.attempts == 1 && job.worker == worker.name, "\(job)")
            }
        }
    }

    @Test func workersWaitForADatabaseThatGoesAwayAndGoOn() async throws {
        try await withQueue { queue, url, server, directory in
            let (relay, relayedURL) = try await relay(to: url)
            for index in 0..<6 {
                try await queue.add(
                    server.url("/file/100000?rate=400000&key=d\(index)"),
                    to: directory.appendingPathComponent("d\(index)")
                )
            }
            try await withWorker(relayedURL, lease: .seconds(3)) { worker in
                async let run: Void = worker.run(untilSettled: true)
                try await eventually("a job is completed") { (try await queue.status().counts[.completed] ?? 0) >= 1 }
                relay.cut()
                try await Task.sleep(for: .seconds(1))
                relay.restore()
                await run
            }
            await relay.shutdown()
            let jobs = try await queue.jobs()
            #expect(jobs.allSatisfy { $0.state == .completed })
            for index in 0..<6 {
                #expect(try Data(contentsOf: directory.appendingPathComponent("d\(index)")).count == 100_000)
            }
        }
    }
}
