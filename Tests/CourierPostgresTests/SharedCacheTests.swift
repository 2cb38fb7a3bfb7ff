import Courier
import CourierTesting
import Foundation
import PostgresNIO
import Testing

@testable import CourierPostgres

/// What `/cache/NAME` answers.
struct CacheAnswer: Decodable, Sendable {
    var path: String
    var served: Int
}

/// A session over `server` whose cache is a memory store in front of a shared store on its own pool of
/// connections to `url`: one "process" of a fleet.
struct FleetMember {
    let session: Session
    let store: PostgresCacheStore

    init(_ url: String, server: TestServer, operationTimeout: Duration = .seconds(1)) throws {
        store = PostgresCacheStore(
            database: try FleetDatabase.opened(url: url, maxConnections: 4),
            operationTimeout: operationTimeout
        )
        let cache = ResponseCache(shared: store)
        session = Session(
            configuration: Configuration {
                $0.baseURL = server.baseURL
                $0.cache = cache
                $0.cachePolicy = .http
            }
        )
    }

    func get(_ path: String) async throws -> Response<CacheAnswer> {
        try await session.send(Request<CacheAnswer>.get(path))
    }

    func close() async {
        try? await session.shutdown()
        await store.database.close()
    }
}

@Suite(
    "A response cache shared by a fleet through PostgreSQL",
    .enabled(if: TestDatabase.isAvailable),
    .timeLimit(.minutes(2))
)
struct SharedCacheTests {
    @Test func whatOneMemberFetchedTheOthersRead() async throws {
        try await TestDatabase.withFresh { url in
            try await withTestServer { server in
                let first = try FleetMember(url, server: server)
                let second = try FleetMember(url, server: server)
                let fetched = try await first.get("/cache/shared?cache-control=max-age=60")
                let read = try await second.get("/cache/shared?cache-control=max-age=60")
                #expect(!fetched.isFromCache && read.isFromCache && read.value.served == 1)
                #expect(server.hits("/cache/shared") == 1)
                await first.close()
                await second.close()
            }
        }
    }

    @Test func simultaneousMissesOfAFleetReachTheOriginOnce() async throws {
        try await TestDatabase.withFresh { url in
            try await withTestServer { server in
                let members = try (0..<6).map { _ in try FleetMember(url, server: server) }
                let answers = try await withThrowingTaskGroup(of: Int.self) { group in
                    for member in members {
                        group.addTask {
                            try await member.get("/cache/slow?cache-control=max-age=60&wait=400").value.served
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(answers == Array(repeating: 1, count: 6))
                #expect(server.hits("/cache/slow") == 1)
                for member in members { await member.close() }
            }
        }
    }

    @Test func whenTheFetchingMemberDiesAnotherTakesOver() async throws {
        try await TestDatabase.withFresh { url in
            try await withTestServer { server in
                let member = try FleetMember(url, server: server)
                let path = "/cache/orphan?cache-control=max-age=60"
                let key = ResponseCache().key(url: server.url(path))
                // A "member" that took the key's lock and then died: its connection holds the lock until it closes.
                let dying = try FleetDatabase.opened(url: url, maxConnections: 1)
                let lock = PostgresCacheStore.lockID(key)
                let (locked, lockTaken) = AsyncStream<Void>.makeStream()
                let holder = Task {
                    try await dying.client.withConnection { connection in
                        try await connection.query("SELECT pg_advisory_lock(\(lock))", logger: PostgresSchema.quiet)
                        lockTaken.yield()
                        try await Task.sleep(for: .seconds(30))
                    }
                }
                for await _ in locked { break }
                let start = ContinuousClock.now
                async let answer = member.get(path)
                try await Task.sleep(for: .milliseconds(500))
                #expect(server.hits("/cache/orphan") == 0)  // it waits for the holder
                holder.cancel()
                await dying.close()  // the connection closes: the server releases the lock
                let response = try await answer
                #expect(response.value.served == 1 && ContinuousClock.now - start >= .milliseconds(500))
                #expect(server.hits("/cache/orphan") == 1)
                await member.close()
            }
        }
    }

    @Test func aSlowDatabaseCostsABoundedWaitAndNoErrorAndIsUsedAgainWhenQuick() async throws {
        try await withRelayedDatabase { url, relayedURL, relay in
            try await withTestServer { server in
                let member = try FleetMember(relayedURL, server: server, operationTimeout: .milliseconds(300))
                let other = try FleetMember(url, server: server)
                _ = try await member.get("/cache/before?cache-control=max-age=60")
                relay.slow(by: .seconds(5))
                for index in 0..<3 {  // each store operation gives up after 300 ms: a miss, not a failure
                    let start = ContinuousClock.now
                    let response = try await member.get("/cache/slow\(index)?cache-control=max-age=60")
                    #expect(response.value.served == 1)
                    let took = ContinuousClock.now - start
                    #expect(took < .seconds(5), "bounded by the store's wait, not the database's 5 s")
                    #expect(index > 0 || took >= .milliseconds(300), "the store waited for the slow database")
                }
                #expect(server.hits("/cache/slow0") == 1)
                relay.slow(by: .zero)
                // Once what was held back has drained, entries reach the database again without a restart.
                var shared = false
                for index in 0..<40 where !shared {
                    _ = try await member.get("/cache/after\(index)?cache-control=max-age=60")
                    shared = try await other.get("/cache/after\(index)?cache-control=max-age=60").isFromCache
                    if !shared { try await Task.sleep(for: .milliseconds(250)) }
                }
                #expect(shared)
                await member.close()
                await other.close()
            }
        }
    }

    @Test func aDatabaseThatGoesAwayNeverFailsARequestAndIsUsedAgainWhenBack() async throws {
        try await withRelayedDatabase { url, relayedURL, relay in
            try await withTestServer { server in
                let member = try FleetMember(relayedURL, server: server, operationTimeout: .milliseconds(500))
                let other = try FleetMember(url, server: server)
                // In use first: the table prepared and an entry shared (on a loaded machine the first connection
                // can take most of the preparation's 5 s; a cut before it ends would test an unprepared store).
                var inUse = false
                for index in 0..<40 where !inUse {
                    _ = try await member.get("/cache/before\(index)?cache-control=max-age=60")
                    inUse = try await other.get("/cache/before\(index)?cache-control=max-age=60").isFromCache
                    if !inUse { try await Task.sleep(for: .milliseconds(250)) }
                }
                #expect(inUse)
                relay.cut()
                let start = ContinuousClock.now
                for index in 0..<3 {  // misses, each bounded by the store's wait; none fails
                    let response = try await member.get("/cache/during\(index)?cache-control=max-age=60")
                    #expect(response.value.served == 1)
                }
                #expect(ContinuousClock.now - start < .seconds(10))
                relay.restore()
                _ = try await member.get("/cache/after?cache-control=max-age=60")
                // Stored in the shared database again without a restart: the other member reads it.
                let read = try await other.get("/cache/after?cache-control=max-age=60")
                #expect(read.isFromCache && server.hits("/cache/after") == 1)
                await member.close()
                await other.close()
            }
        }
    }
}

/// Runs `body` with a fresh database's URL, and a second URL that reaches it through a ``TCPRelay`` the test can
/// cut or slow down.
func withRelayedDatabase(
    _ body: (_ url: String, _ relayedURL: String, _ relay: TCPRelay) async throws -> Void
) async throws {
    try await TestDatabase.withFresh { url in
        let (relay, relayedURL) = try await relay(to: url)
        do {
            try await body(url, relayedURL, relay)
        } catch {
            await relay.shutdown()
            throw error
        }
        await relay.shutdown()
    }
}

/// A relay to the database at `url`, and the URL that reaches the database through it.
func relay(to url: String) async throws -> (TCPRelay, String) {
    var components = try #require(URLComponents(string: url))
    let relay = try await TCPRelay.start(to: try #require(components.port))
    components.port = relay.port
    return (relay, try #require(components.string))
}
