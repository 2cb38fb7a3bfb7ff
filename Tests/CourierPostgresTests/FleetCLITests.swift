import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

/// The built `courier` beside the test bundle, run as a child process.
enum FleetCLI {
    /// Whether this build has `courier queue` and `--cache-store postgres://` (the `Postgres` trait).
    static var isBuiltIn: Bool {
        #if Postgres
        true
        #else
        false
        #endif
    }

    static var executable: URL {
        var directory = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appending(path: "courier").path())
            && directory.pathComponents.count > 1
        {
            directory.deleteLastPathComponent()
        }
        return directory.appending(path: "courier")
    }

    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// A started `courier` process; `finished()` waits for it.
    final class Child: Sendable {
        let process: Process
        private let output: URL
        private let errors: URL
        private let exit: Task<Int32, Never>

        init(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = FleetCLI.executable
            process.arguments = arguments
            output = FileManager.default.temporaryDirectory.appending(path: "courier-fleet-\(UUID().uuidString).out")
            errors = FileManager.default.temporaryDirectory.appending(path: "courier-fleet-\(UUID().uuidString).err")
            _ = FileManager.default.createFile(atPath: output.path(), contents: nil)
            _ = FileManager.default.createFile(atPath: errors.path(), contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = try FileHandle(forWritingTo: errors)
            process.standardInput = FileHandle.nullDevice
            let (ended, end) = AsyncStream<Int32>.makeStream()
            process.terminationHandler = {
                end.yield($0.terminationStatus)
                end.finish()
            }
            try process.run()
            self.process = process
            exit = Task {
                for await status in ended { return status }
                return -1
            }
        }

        func signal(_ number: Int32) { kill(process.processIdentifier, number) }

        func finished() async -> Outcome {
            let status = await exit.value
            defer {
                try? FileManager.default.removeItem(at: output)
                try? FileManager.default.removeItem(at: errors)
            }
            return Outcome(
                status: status,
                stdout: (try? String(contentsOf: output, encoding: .utf8)) ?? "",
                stderr: (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            )
        }
    }

    static func run(_ arguments: [String]) async throws -> Outcome {
        try await Child(arguments).finished()
    }
}

@Suite(
    "courier queue and --cache-store across processes",
    .enabled(if: TestDatabase.isAvailable && FleetCLI.isBuiltIn),
    .timeLimit(.minutes(3))
)
struct FleetCLITests {
    @Test func workersKilledAtRandomLoseNoJobAndDoNoneTwice() async throws {
        try await TestDatabase.withFresh { url in
            try await withTestServer { server in
                let directory = try temporaryDirectory()
                defer { try? FileManager.default.removeItem(at: directory) }
                let size = 600_000
                for index in 0..<8 {
                    let added = try await FleetCLI.run([
                        "queue", "add", "--db", url, "-d", directory.path, "--sha256", ServerFiles.sha256(count: size),
                        server.url("/file/\(size)?rate=400000&key=k\(index)").absoluteString,
                    ])
                    #expect(added.status == 0, "\(added.stderr)")
                    // One destination per job: the file names come from the URL, so rename after adding.
                    #expect(added.stdout.hasSuffix("/\(size)\n"))
                    let id = Int(added.stdout.split(separator: " ")[0]) ?? 0
                    _ = try await TestDatabase.withConnection(url) { database in
                        try await TestDatabase.execute(
                            "UPDATE courier_download_jobs SET destination = '\(directory.path)/f\(index)' WHERE id = \(id)",
                            on: database
                        )
                    }
                }
                let work = ["queue", "work", "--db", url, "--concurrency", "2", "--lease", "2", "--until-done"]
                let doomed = try (0..<2).map { _ in try FleetCLI.Child(work) }
                let survivor = try FleetCLI.Child(work)
                try await Task.sleep(for: .milliseconds(900))
                doomed[0].signal(SIGKILL)
                try await Task.sleep(for: .milliseconds(400))
                doomed[1].signal(SIGKILL)
                for child in doomed { _ = await child.finished() }
                let outcome = await survivor.finished()
                #expect(outcome.status == 0, "\(outcome.stderr)")
                let status = try await FleetCLI.run(["queue", "status", "--db", url])
                #expect(
                    status.stderr.contains("0 queued, 0 running, 8 completed, 0 failed"),
                    "\(status.stdout)\(status.stderr)"
                )
                #expect(
                    status.stdout.contains("\t2/5\t") || status.stdout.contains("\t3/5\t"),
                    "no job was taken over: \(status.stdout)"
                )
                for index in 0..<8 {
                    let file = directory.appendingPathComponent("f\(index)")
                    #expect(try sha256Hex(Data(contentsOf: file)) == ServerFiles.sha256(count: size))
                    #expect(!FileManager.default.fileExists(atPath: file.path + ".part"))
                }
                // Killed workers' jobs were taken over: some were claimed twice, none completed twice, and the
                // bytes sent stay below two whole copies of every file (resumed, not started over every time).
                let sent = (0..<8).map { server.counter("file-bytes:k\($0)") }.reduce(0, +)
                #expect(sent < 8 * size * 2)
            }
        }
    }

    /// SIGTERM shuts the worker's service group down gracefully: the running job goes back to the queue (its part
    /// file stays), then the session and the database close, and the command exits 0, promptly.
    @Test func sigtermHandsTheRunningJobsBackAndExitsZero() async throws {
        try await TestDatabase.withFresh { url in
            try await withTestServer { server in
                let directory = try temporaryDirectory()
                defer { try? FileManager.default.removeItem(at: directory) }
                let added = try await FleetCLI.run([
                    "queue", "add", "--db", url, "-d", directory.path,
                    server.url("/file/2000000?rate=200000").absoluteString,
                ])
                #expect(added.status == 0)
                let worker = try FleetCLI.Child(["queue", "work", "--db", url])
                try await Task.sleep(for: .seconds(2))
                let signalled = ContinuousClock.now
                worker.signal(SIGTERM)
                let outcome = await worker.finished()
                let took = ContinuousClock.now - signalled
                #expect(outcome.status == 0 && outcome.stderr.contains("handed back 1"), "\(outcome.stderr)")
                #expect(took < .seconds(10), "the worker took \(took) to stop")
                let status = try await FleetCLI.run(["queue", "status", "--db", url])
                #expect(status.stdout.contains("\tqueued\t0/5\t"), "\(status.stdout)")
                #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("2000000.part").path))
            }
        }
    }

    @Test func processesShareOneCacheAndOneOriginHit() async throws {
        try await TestDatabase.withFresh { url in
            try await withTestServer { server in
                let target = server.url("/cache/fleet?cache-control=max-age=60").absoluteString
                for _ in 0..<3 {
                    let got = try await FleetCLI.run(["get", target, "--cache", "http", "--cache-store", url])
                    #expect(got.status == 0 && got.stdout.contains("\"served\":1"), "\(got.stderr)")
                }
                #expect(server.hits("/cache/fleet") == 1)
                let stats = try await FleetCLI.run(["cache", "stats", "--cache-store", url])
                #expect(stats.status == 0 && stats.stdout.contains("entries: 1"))
                let cleared = try await FleetCLI.run(["cache", "clear", "--cache-store", url])
                #expect(cleared.stderr.contains("removed 1 entry"))
            }
        }
    }

    @Test func theDemoTakesTheFleetStepsWhenGivenADatabase() async throws {
        try await TestDatabase.withFresh { url in
            let outcome = try await FleetCLI.run(["demo", "--db", url])
            #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
            #expect(
                outcome.stdout.contains(
                    "✔ Three instances share one PostgreSQL cache: a cold start reaches the origin once"
                )
            )
            #expect(outcome.stdout.contains("✔ Two workers share a download queue; each job is done once"))
        }
    }

    @Test func badDatabaseURLsAndPasswordsGiveOneClearLine() async throws {
        let url = try #require(TestDatabase.url)
        let malformed = try await FleetCLI.run(["queue", "status", "--db", "mysql://db/app"])
        #expect(malformed.status == 1 && malformed.stderr.contains("does not start with postgres://"))
        let wrong = url.replacingOccurrences(
            of: #"://([^:@]+):[^@]*@"#,
            with: "://$1:hunter2@",
            options: .regularExpression
        )
        let refused = try await FleetCLI.run(["cache", "stats", "--cache-store", wrong])
        #expect(
            refused.status == 1 && refused.stderr.contains("password authentication failed")
                && !refused.stderr.contains("hunter2")
        )
        // A request through a store that refuses still succeeds: the shared cache is only ever a miss.
        try await withTestServer { server in
            let got = try await FleetCLI.run([
                "get", server.url("/cache/x?cache-control=max-age=60").absoluteString, "--cache", "http",
                "--cache-store", wrong,
            ])
            #expect(got.status == 0 && got.stderr.contains("is unavailable; requests go on without it"))
        }
    }
}
