@testable import CourierPostgres
import Courier
import CourierTesting
import Foundation
import PostgresNIO
import Testing

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
        store = PostgresCacheStore(database: try FleetDatabase(url: url, maxConnections: 4), operationTimeout: operationTimeout)
        let cache = ResponseCache(shared: store)
        session = Session(configuration: Configuration {
            $0.baseURL = server.baseURL
            $0.cache = cache
            $0.cachePolicy = .http
        })
    }

    func get(_ path: String) async throws -> Response<CacheAnswer> {
        try await session.send(Request<CacheAnswer>.get(path))
    }

    func close() async {
        try? await session.shutdown()
        await store.database.close()
    }
}

@Suite("A response cache shared by a fleet through PostgreSQL", .enabled(if: TestDatabase.isAvailable), .timeLimit(.minutes(2)))
struct SharedCacheTests {
    @Test func whatOneMemberFetchedTheOthersRead() async throws {
        try await TestDatabase.withFresh { url in
            try await withTestServer { server in
                let first = try FleetMember(url, server: server), second = try FleetMember(url, server: server)
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
                        group.addTask { try await member.get("/cache/slow?cache-control=max-age=60&wait=400").value.served }
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
                let dying = try FleetDatabase(url: url, maxConnections: 1)
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

    @Test func aDatabaseThatGoesAwayNeverFailsARequestAndIsUsedAgainWhenBack() async throws {
        try await TestDatabase.withFresh { url in
            let components = try #require(URLComponents(string: url))
            let relay = try await TCPRelay.start(to: try #require(components.port))
            var relayed = components
            relayed.port = relay.port
            let relayedURL = try #require(relayed.string)
            try await withTestServer { server in
                let member = try FleetMember(relayedURL, server: server, operationTimeout: .milliseconds(500))
                let other = try FleetMember(url, server: server)
                _ = try await member.get("/cache/before?cache-control=max-age=60")
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
            await relay.shutdown()
        }
    }
}
