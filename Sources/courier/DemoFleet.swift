import Courier
import CourierTesting

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if Postgres
import CourierPostgres
#endif

extension DemoTour {
    /// The fleet's part of the tour, when a database is given (`--db` or `COURIER_POSTGRES_URL`) and this build
    /// has the `Postgres` trait: three "instances" share one cache and a cold start reaches the origin once, and
    /// two workers share a download queue. Otherwise it says how to see it, and the offline tour is unchanged.
    mutating func fleetSteps(database url: String?) async throws {
        #if Postgres
        guard let url else {
            try Output.stdout(
                "· Fleet steps skipped: no database. Start one and pass it:\n"
                    + "    export COURIER_POSTGRES_URL=$(Scripts/postgres start /tmp/courier-pg) && courier demo"
            )
            return
        }
        let server = self.server
        let key = UUID().uuidString.prefix(8)
        await check("Three instances share one PostgreSQL cache: a cold start reaches the origin once") {
            let path = "/cache/demo-fleet-\(key)?cache-control=max-age=60&wait=200"
            let served = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        // Each instance with its own connection pool, running while it works.
                        try await withFleetDatabase(url: url, maxConnections: 2, logger: FleetStores.logger) {
                            database in
                            let store = PostgresCacheStore(database: database, logger: FleetStores.logger)
                            try await store.prepare()
                            return try await withSession(
                                Configuration {
                                    $0.baseURL = server.baseURL
                                    $0.cache = ResponseCache(shared: store)
                                }
                            ) { session in
                                try await session.send(Request<Data>.get(path).cachePolicy(.http)).isFromCache
                            }
                        }
                    }
                }
                return try await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            let hits = server.hits("/cache/demo-fleet-\(key)")
            try await withFleetDatabase(url: url, maxConnections: 1, logger: FleetStores.logger) {
                await PostgresCacheStore(database: $0).removeEntries { $0.url.contains("demo-fleet-\(key)") }
            }
            return (
                hits == 1,
                "3 sessions, each with its own connections, missed at once → \(hits) origin hit; "
                    + "\(served.filter { $0 }.count) answered from the shared entry"
            )
        }
        await check("Two workers share a download queue; each job is done once") {
            try await withFleetDatabase(url: url, logger: FleetStores.logger) { database in
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "courier-demo-queue-\(key)"
                )
                defer { try? FileManager.default.removeItem(at: directory) }
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let queue = DownloadQueue(database: database)
                var ids: [Int64] = []
                for index in 0..<6 {
                    ids.append(
                        try await queue.add(
                            server.url("/file/200000?rate=800000&key=demo-\(key)-\(index)"),
                            to: directory.appendingPathComponent("file-\(index)"),
                            checksum: try .sha256(ServerFiles.sha256(count: 200_000))
                        )
                    )
                }
                try await withSession { session in
                    await withTaskGroup(of: Void.self) { group in
                        for _ in 0..<2 {
                            group.addTask {
                                guard
                                    let worker = try? DownloadWorker(
                                        queue: queue,
                                        session: session,
                                        concurrency: 2,
                                        pollInterval: .milliseconds(100)
                                    )
                                else { return }
                                await worker.run(untilSettled: true)
                            }
                        }
                    }
                }
                var done = 0
                for id in ids where try await queue.job(id)?.state == .completed { done += 1 }
                let requests = (0..<6).map { server.counter("file:demo-\(key)-\($0)") }.reduce(0, +)
                try await queue.remove(ids)
                return (
                    done == 6 && requests == 6,
                    "6 jobs, 2 workers × 2 slots → \(done) completed and verified, \(requests) downloads"
                )
            }
        }
        #else
        try Output.stdout(
            "· Fleet steps skipped: this build has no PostgreSQL support (swift run --traits Postgres courier demo --db URL)"
        )
        #endif
    }
}
