import Courier
import CourierTesting
import Foundation

#if canImport(Glibc)
import Glibc
#endif
#if Postgres
import CourierPostgres
#endif

#if Postgres
typealias FleetDatabaseHandle = FleetDatabase
#else
typealias FleetDatabaseHandle = Never
#endif

extension Scenario {
    /// `fleet-cache`: 4 processes (this executable again, see ``FleetChild``), each sending 1,000 GETs over 100
    /// keys of a 20 ms origin, 8 at a time: once with one PostgreSQL store shared by all four (behind each one's
    /// memory store), once with a disk store of each process's own. Reports the origin hits (target: 100, one per
    /// key, with the shared store, against up to 400) and the total time. Needs a build with `--traits Postgres`
    /// and a database in `COURIER_POSTGRES_URL`; without either it says so and measures nothing.
    static let fleetCache = Scenario(name: "fleet-cache") { _, plan in
        #if Postgres
        guard ProcessInfo.processInfo.environment["COURIER_POSTGRES_URL"] != nil else {
            return .skipped(
                "fleet-cache",
                because: "no database: set COURIER_POSTGRES_URL (Scripts/postgres start DIR prints one)"
            )
        }
        let processes = 4
        let keys = plan.isQuick ? 20 : 100
        let count = plan.isQuick ? 100 : 1_000
        let server = try await TestServer.start()
        var seconds: [String: Double] = [:]
        var hits: [String: Double] = [:]
        for mode in ["shared", "disk"] {
            let name = "fleet-\(mode)-\(UUID().uuidString.prefix(8))"
            let prefix = server.url("/cache/\(name)-").absoluteString
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<processes {
                    group.addTask { try await FleetChild.spawn(mode: mode, count: count, keys: keys, prefix: prefix) }
                }
                try await group.waitForAll()
            }
            seconds[mode] = (ContinuousClock.now - start).seconds
            hits[mode] = Double((0..<keys).map { server.hits("/cache/\(name)-\($0)") }.reduce(0, +))
        }
        await server.shutdown()
        return ScenarioResult(
            name: "fleet-cache",
            unit: "s",
            higherIsBetter: false,
            results: seconds,
            metrics: ["origin_hits": hits],
            notes: String(
                format:
                    "origin hits: shared %.0f (target %d, one per key), disk %.0f (up to %d); total time shared %.2f s, disk %.2f s; "
                    + "%d processes × %d GETs over %d keys of a 20 ms origin, 8 at a time, each process with a memory store in front",
                hits["shared"] ?? 0,
                keys,
                hits["disk"] ?? 0,
                keys * processes,
                seconds["shared"] ?? 0,
                seconds["disk"] ?? 0,
                processes,
                count,
                keys
            )
        )
        #else
        return .skipped(
            "fleet-cache",
            because:
                "built without the Postgres trait (swift build -c release --traits Postgres --product courier-bench)"
        )
        #endif
    }
}

extension ScenarioResult {
    /// A scenario that could not run here, and why.
    static func skipped(_ name: String, because reason: String) -> ScenarioResult {
        ScenarioResult(name: name, unit: "", higherIsBetter: true, results: [:], notes: "not measured: \(reason)")
    }
}

/// The child side of `fleet-cache`: `courier-bench --fleet-child MODE:COUNT:KEYS --url PREFIX` sends COUNT GETs
/// of `PREFIX<key>?cache-control=max-age=600&wait=20`, 8 at a time over KEYS keys, through a session whose cache
/// is a memory store in front of the PostgreSQL store in `COURIER_POSTGRES_URL` (MODE `shared`) or of a disk store
/// in a directory of its own (`disk`).
enum FleetChild {
    /// Runs this executable as one child (which inherits `COURIER_POSTGRES_URL`) and waits for it.
    static func spawn(mode: String, count: Int, keys: Int, prefix: String) async throws {
        try await Tools.run(
            URL(filePath: "/proc/self/exe").resolvingSymlinksInPath(),
            ["--fleet-child", "\(mode):\(count):\(keys)", "--url", prefix]
        )
    }

    static func run(_ spec: String, prefix: String) async throws {
        let parts = spec.split(separator: ":").map(String.init)
        guard parts.count == 3, ["shared", "disk"].contains(parts[0]), let count = Int(parts[1]),
            let keys = Int(parts[2]), count > 0, keys > 0
        else {
            throw BenchError.unexpected("--fleet-child takes shared|disk:COUNT:KEYS, not \(spec)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-fleet-child-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let store: any CacheStorage
        var database: FleetDatabaseHandle? = nil
        if parts[0] == "shared" {
            #if Postgres
            guard let url = ProcessInfo.processInfo.environment["COURIER_POSTGRES_URL"] else {
                throw BenchError.unexpected("no COURIER_POSTGRES_URL")
            }
            let shared = try FleetDatabase(url: url)
            store = PostgresCacheStore(database: shared)
            database = shared
            #else
            throw BenchError.unexpected("built without the Postgres trait")
            #endif
        } else {
            store = try DiskCacheStore(directory: directory)
        }
        let configuration = Configuration {
            $0.cache = ResponseCache(disk: store)
            $0.cachePolicy = .http
            $0.validators = []
        }
        let work = {
            try await withSession(configuration) { session in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<8 {
                        group.addTask {
                            for index in stride(from: worker, to: count, by: 8) {
                                _ = try await session.send(
                                    Request<Data>.get("\(prefix)\(index % keys)?cache-control=max-age=600&wait=20")
                                )
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
        #if Postgres
        if let database { return try await database.whileRunning { _ in try await work() } }
        #endif
        try await work()
    }
}

extension Scenario {
    /// `queue-workers`: 200 files of 5 MB (16 of 512 KB with `--quick`) from the loopback server, which paces
    /// each connection to 5 MB/s, drained through one PostgreSQL `DownloadQueue` by 1 worker process and by 4
    /// (2 downloads at once each): target ≥ 3.5× with 4. Then 4 workers again, 2 of them killed with SIGKILL
    /// halfway through: the report counts lost jobs (target 0), jobs taken over after a kill, and
    /// files whose checksum is wrong (target 0). Needs the Postgres trait and `COURIER_POSTGRES_URL`.
    static let queueWorkers = Scenario(name: "queue-workers") { _, plan in
        #if Postgres
        guard let url = ProcessInfo.processInfo.environment["COURIER_POSTGRES_URL"] else {
            return .skipped(
                "queue-workers",
                because: "no database: set COURIER_POSTGRES_URL (Scripts/postgres start DIR prints one)"
            )
        }
        let files = plan.isQuick ? 16 : 200
        let size = plan.isQuick ? 512 << 10 : 5_000_000
        let rate = plan.isQuick ? 2 << 20 : 5_000_000
        let digest = ServerFiles.sha256(count: size)
        let server = try await TestServer.start()
        var seconds: [String: Double] = [:]
        var killed: (lost: Int, takenOver: Int, wrong: Int) = (0, 0, 0)
        try await withFleetDatabase(url: url) { database in
            let queue = DownloadQueue(database: database)
            for (label, workers, kills) in [("1-worker", 1, 0), ("4-workers", 4, 0), ("4-workers-2-killed", 4, 2)] {
                let directory = try Transfers.scratchDirectory()
                defer { try? FileManager.default.removeItem(at: directory) }
                let run = UUID().uuidString.prefix(8)
                var ids: [Int64] = []
                for index in 0..<files {
                    ids.append(
                        try await queue.add(
                            server.url("/file/\(size)?rate=\(rate)&key=\(run)-\(index)"),
                            to: directory.appendingPathComponent("f\(index)"),
                            checksum: try .sha256(digest),
                            maxAttempts: 5
                        )
                    )
                }
                let start = ContinuousClock.now
                let children = try (0..<workers).map { _ in try QueueChild() }
                if kills > 0 {
                    while try await queue.status().counts[.completed] ?? 0 < files / 2 {
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    for child in children.prefix(kills) { child.kill() }
                }
                for child in children { await child.exited() }
                seconds[label] = (ContinuousClock.now - start).seconds
                let jobs = try await queue.jobs().filter { ids.contains($0.id) }
                if kills > 0 {
                    killed.lost = files - jobs.filter { $0.state == .completed }.count
                    killed.takenOver = jobs.filter { $0.attempts > 1 }.count
                    let checksum = try DownloadChecksum.sha256(digest)
                    killed.wrong =
                        (0..<files).filter { (try? checksum.verify(directory.appendingPathComponent("f\($0)"))) == nil }
                        .count
                }
                try await queue.remove(ids)
            }
        }
        await server.shutdown()
        let speedup = (seconds["1-worker"] ?? 0) / max(seconds["4-workers"] ?? 1, 0.001)
        return ScenarioResult(
            name: "queue-workers",
            unit: "s",
            higherIsBetter: false,
            results: seconds,
            metrics: [
                "jobs": [
                    "lost": Double(killed.lost), "taken_over": Double(killed.takenOver),
                    "wrong_checksum": Double(killed.wrong),
                ]
            ],
            notes: String(
                format:
                    "4 workers / 1 worker = %.2f× faster (target >= 3.5); after killing 2 of 4 workers halfway through: "
                    + "%d jobs lost (target 0), %d taken over, %d files with a wrong checksum (target 0); "
                    + "%d files of %@ paced to %@/s per connection, 2 downloads at once per worker, leases of 3 s",
                speedup,
                killed.lost,
                killed.takenOver,
                killed.wrong,
                files,
                ByteCount.format(size),
                ByteCount.format(rate)
            )
        )
        #else
        return .skipped(
            "queue-workers",
            because:
                "built without the Postgres trait (swift build -c release --traits Postgres --product courier-bench)"
        )
        #endif
    }
}

/// A worker process of `queue-workers`: this executable with `--queue-child`, working through the queue in
/// `COURIER_POSTGRES_URL` until no job is left.
final class QueueChild: Sendable {
    private let process: Process
    private let ended: Task<Void, Never>

    init() throws {
        let process = Process()
        process.executableURL = Tools.benchmark
        process.arguments = ["--queue-child", "2"]
        process.standardOutput = FileHandle.nullDevice
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in continuation.finish() }
        try process.run()
        self.process = process
        ended = Task { for await _ in stream {} }
    }

    func kill() { Glibc.kill(process.processIdentifier, SIGKILL) }

    func exited() async { await ended.value }

    /// The child's work: a worker with `concurrency` slots and 3 s leases, until the queue is settled.
    static func run(concurrency: Int) async throws {
        #if Postgres
        guard let url = ProcessInfo.processInfo.environment["COURIER_POSTGRES_URL"] else {
            throw BenchError.unexpected("no COURIER_POSTGRES_URL")
        }
        try await withFleetDatabase(url: url) { database in
            try await withSession { session in
                let worker = try DownloadWorker(
                    queue: DownloadQueue(database: database),
                    session: session,
                    concurrency: concurrency,
                    lease: .seconds(3),
                    pollInterval: .milliseconds(100)
                )
                await worker.run(untilSettled: true)
            }
        }
        #else
        throw BenchError.unexpected("built without the Postgres trait")
        #endif
    }
}
