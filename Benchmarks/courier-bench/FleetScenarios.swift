import Courier
import CourierTesting
import Foundation
#if Postgres
import CourierPostgres
#endif

extension Scenario {
    /// `fleet-cache`: 4 processes (this executable again, see ``FleetChild``), each sending 1,000 GETs over 100
    /// keys of a 20 ms origin, 8 at a time: once with one PostgreSQL store shared by all four (behind each one's
    /// memory store), once with a disk store of each process's own. Reports the origin hits (target: 100, one per
    /// key, with the shared store, against up to 400) and the total time. Needs a build with `--traits Postgres`
    /// and a database in `COURIER_POSTGRES_URL`; without either it says so and measures nothing.
    static let fleetCache = Scenario(name: "fleet-cache") { _, plan in
        #if Postgres
        guard let database = ProcessInfo.processInfo.environment["COURIER_POSTGRES_URL"] else {
            return .skipped("fleet-cache", because: "no database: set COURIER_POSTGRES_URL (Scripts/postgres start DIR prints one)")
        }
        let processes = 4, keys = plan.isQuick ? 20 : 100, count = plan.isQuick ? 100 : 1_000
        let server = try await TestServer.start()
        var seconds: [String: Double] = [:], hits: [String: Double] = [:]
        for mode in ["shared", "disk"] {
            let name = "fleet-\(mode)-\(UUID().uuidString.prefix(8))"
            let prefix = server.url("/cache/\(name)-").absoluteString
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<processes {
                    group.addTask { try await FleetChild.spawn(mode: mode, count: count, keys: keys, prefix: prefix, database: database) }
                }
                try await group.waitForAll()
            }
            seconds[mode] = (ContinuousClock.now - start).seconds
            hits[mode] = Double((0..<keys).map { server.hits("/cache/\(name)-\($0)") }.reduce(0, +))
        }
        await server.shutdown()
        return ScenarioResult(
            name: "fleet-cache", unit: "s", higherIsBetter: false, results: seconds, metrics: ["origin_hits": hits],
            notes: String(format: "origin hits: shared %.0f (target %d, one per key), disk %.0f (up to %d); total time shared %.2f s, disk %.2f s; "
                          + "%d processes × %d GETs over %d keys of a 20 ms origin, 8 at a time, each process with a memory store in front",
                          hits["shared"] ?? 0, keys, hits["disk"] ?? 0, keys * processes, seconds["shared"] ?? 0, seconds["disk"] ?? 0,
                          processes, count, keys))
        #else
        return .skipped("fleet-cache", because: "built without the Postgres trait (swift build -c release --traits Postgres --product courier-bench)")
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
    static func spawn(mode: String, count: Int, keys: Int, prefix: String, database: String) async throws {
        let process = Process()
        process.executableURL = URL(filePath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--fleet-child", "\(mode):\(count):\(keys)", "--url", prefix]
        process.environment = ProcessInfo.processInfo.environment.merging(["COURIER_POSTGRES_URL": database]) { _, new in new }
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        guard status == 0 else { throw BenchError.unexpected("a fleet-cache child (\(mode)) exited with \(status)") }
    }

    static func run(_ spec: String, prefix: String) async throws {
        let parts = spec.split(separator: ":").map(String.init)
        guard parts.count == 3, ["shared", "disk"].contains(parts[0]), let count = Int(parts[1]), let keys = Int(parts[2]), count > 0, keys > 0 else {
            throw BenchError.unexpected("--fleet-child takes shared|disk:COUNT:KEYS, not \(spec)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-fleet-child-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store: any CacheStorage
        var close: @Sendable () async -> Void = {}
        if parts[0] == "shared" {
            #if Postgres
            guard let url = ProcessInfo.processInfo.environment["COURIER_POSTGRES_URL"] else { throw BenchError.unexpected("no COURIER_POSTGRES_URL") }
            let database = try FleetDatabase(url: url)
            store = PostgresCacheStore(database: database)
            close = { await database.close() }
            #else
            throw BenchError.unexpected("built without the Postgres trait")
            #endif
        } else {
            store = try DiskCacheStore(directory: directory)
        }
        let configuration = Configuration { $0.cache = ResponseCache(disk: store); $0.cachePolicy = .http; $0.validators = [] }
        try await withSession(configuration) { session in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        for index in stride(from: worker, to: count, by: 8) {
                            _ = try await session.send(Request<Data>.get("\(prefix)\(index % keys)?cache-control=max-age=600&wait=20"))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        await close()
    }
}
