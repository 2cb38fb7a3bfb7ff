import Courier
import CourierTestSupport
import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import Testing

@testable import CourierPostgres

/// An entry with a compressible JSON body.
func sampleEntry(_ name: String, bodyBytes: Int = 4_000, storedAt: Date = Date()) -> CacheEntry {
    let body = Data(
        String(repeating: "{\"name\":\"\(name)\",\"value\":42}", count: bodyBytes / 10 + 1).utf8.prefix(bodyBytes)
    )
    return CacheEntry(
        key: CacheKey(url: URL(string: "http://127.0.0.1:9/\(name)")!).text,
        method: "GET",
        url: "http://127.0.0.1:9/\(name)",
        status: 200,
        headers: [.contentType: "application/json", .eTag: "\"\(name)\""],
        varyingRequestHeaders: [:],
        storedAt: storedAt,
        initialAge: .zero,
        expiresAt: storedAt.addingTimeInterval(60),
        body: body
    )
}

@Suite(
    "PostgresCacheStore: a response cache shared through PostgreSQL",
    .enabled(if: TestDatabase.isAvailable),
    .timeLimit(.minutes(2))
)
struct PostgresCacheStoreTests {
    @Test func entriesGoInCompressedAndComeBackWhole() async throws {
        try await TestDatabase.withDatabase { database, url in
            let store = PostgresCacheStore(database: database)
            let entry = sampleEntry("a", bodyBytes: 20_000)
            await store.store(entry)
            let back = await store.entry(for: CacheKey(text: entry.key))
            #expect(back == entry)
            let statistics = await store.statistics()
            #expect(statistics.entryCount == 1 && statistics.bodyBytes == 20_000)
            #expect(statistics.storedBodyBytes < 2_000 && statistics.uncompressedEntries == 0)
            #expect(await store.summaries().map(\.url) == ["http://127.0.0.1:9/a"])
            // A second store over the same database (another process) sees it.
            let other = PostgresCacheStore(database: try FleetDatabase.opened(url: url))
            #expect(await other.entry(for: CacheKey(text: entry.key)) == entry)
            await other.database.close()
        }
    }

    @Test func removalsByKeyBySelectionAndAll() async throws {
        try await TestDatabase.withDatabase { database, _ in
            let store = PostgresCacheStore(database: database)
            for name in ["a", "b", "c", "d"] { await store.store(sampleEntry(name)) }
            #expect(await store.removeEntry(for: CacheKey(text: sampleEntry("a").key)))
            #expect(await !store.removeEntry(for: CacheKey(text: sampleEntry("a").key)))
            #expect(await store.removeEntries { $0.url.hasSuffix("/b") } == 1)
            #expect(await store.statistics().entryCount == 2)
            #expect(await store.removeAll() == 2)
            #expect(await store.statistics().entryCount == 0)
        }
    }

    @Test func aDamagedRowIsAMissAndIsRemoved() async throws {
        try await TestDatabase.withDatabase { database, _ in
            let store = PostgresCacheStore(database: database)
            let entry = sampleEntry("damaged")
            await store.store(entry)
            // Flip one byte in the middle of the stored entry: the checksum no longer matches.
            try await TestDatabase.execute(
                """
                UPDATE courier_cache SET entry = set_byte(entry, length(entry) / 2, (get_byte(entry, length(entry) / 2) + 1) % 256)
                """,
                on: database
            )
            #expect(await store.entry(for: CacheKey(text: entry.key)) == nil)
            #expect(try await TestDatabase.execute("SELECT count(*)::int FROM courier_cache", on: database) == [0])
        }
    }

    @Test func evictionKeepsTheBytesUnderTheLimitLeastRecentlyReadFirst() async throws {
        try await TestDatabase.withDatabase { database, _ in
            let probe = PostgresCacheStore(database: database)
            await probe.store(sampleEntry("size"))
            let entrySize = await probe.statistics().storedBytes
            await probe.removeAll()
            // Room for three entries; the fourth store evicts the one read longest ago.
            let store = PostgresCacheStore(database: database, maxBytes: entrySize * 3 + entrySize / 2)
            for name in ["a", "b", "c"] { await store.store(sampleEntry(name)) }
            _ = await store.entry(for: CacheKey(text: sampleEntry("a").key))  // "a" is now the most recently read
            await store.store(sampleEntry("d"))
            await store.evict()
            let urls = Set(await store.summaries().map(\.url))
            #expect(urls == Set(["a", "c", "d"].map { "http://127.0.0.1:9/\($0)" }))
            #expect(await store.statistics().storedBytes <= store.maxBytes)
        }
    }

    @Test func oneProcessEvictsAtATime() async throws {
        try await TestDatabase.withDatabase { database, url in
            let store = PostgresCacheStore(database: database, maxBytes: 1)  // every entry is over the budget
            try await store.prepare()
            // Another process is evicting: it holds the lock in an open transaction.
            let other = try FleetDatabase.opened(url: url, maxConnections: 1)
            let (held, holding) = AsyncStream<Void>.makeStream()
            let (done, finish) = AsyncStream<Void>.makeStream()
            let holder = Task {
                try await other.client.withTransaction(logger: PostgresSchema.quiet) { connection in
                    try await connection.query(
                        "SELECT pg_advisory_xact_lock(\(PostgresCacheStore.evictionLock))",
                        logger: PostgresSchema.quiet
                    )
                    holding.yield()
                    for await _ in done {}
                }
            }
            for await _ in held { break }
            try await TestDatabase.execute(
                """
                INSERT INTO courier_cache (digest, key, method, url, status, stored_at, body_bytes, stored_body_bytes, stored_bytes,
                                           compressed, entry) VALUES ('d', 'k', 'GET', 'u', 200, now(), 1, 1, 100, false, '\\x00')
                """,
                on: database
            )
            await store.evict()
            // skipped
            #expect(try await TestDatabase.execute("SELECT count(*)::int FROM courier_cache", on: database) == [1])
            finish.finish()
            try await holder.value
            await store.evict()
            #expect(try await TestDatabase.execute("SELECT count(*)::int FROM courier_cache", on: database) == [0])
            await other.close()
        }
    }

    @Test func anOutageIsLoggedOncePerOutage() async throws {
        let database = try FleetDatabase.opened(url: "postgres://courier:courier@127.0.0.1:9/courier?sslmode=disable")
        let lines = LogLines()
        let store = PostgresCacheStore(
            database: database,
            operationTimeout: .milliseconds(200),
            logger: Logger(label: "test") { _ in lines }
        )
        for name in ["a", "b", "c"] {
            await store.store(sampleEntry(name))
            _ = await store.entry(for: CacheKey(text: sampleEntry(name).key))
        }
        #expect(
            lines.messages.filter { $0.contains("is unavailable; requests go on without it") }.count == 1,
            "\(lines.messages)"
        )
        await database.close()
    }

    @Test func evictionDropsEntriesOlderThanTheMaximumAge() async throws {
        try await TestDatabase.withDatabase { database, _ in
            let store = PostgresCacheStore(database: database, maxAge: .seconds(60))
            await store.store(sampleEntry("old", storedAt: Date().addingTimeInterval(-120)))
            await store.store(sampleEntry("new"))
            #expect(await store.entry(for: CacheKey(text: sampleEntry("old").key)) == nil)
            await store.store(sampleEntry("old2", storedAt: Date().addingTimeInterval(-120)))
            await store.evict()
            #expect(await store.summaries().map(\.url) == ["http://127.0.0.1:9/new"])
        }
    }

    @Test func aDroppedTableIsCreatedAgain() async throws {
        try await TestDatabase.withDatabase { database, _ in
            let store = PostgresCacheStore(database: database)
            await store.store(sampleEntry("a"))
            try await TestDatabase.execute("DROP TABLE courier_cache", on: database)
            // a miss, and the store notices
            #expect(await store.entry(for: CacheKey(text: sampleEntry("a").key)) == nil)
            await store.store(sampleEntry("b"))
            #expect(await store.entry(for: CacheKey(text: sampleEntry("b").key)) != nil)
        }
    }

    @Test func tablesOfANewerSchemaAreRefusedWithOneClearError() async throws {
        try await TestDatabase.withDatabase { database, url in
            try await PostgresCacheStore(database: database).prepare()
            try await TestDatabase.execute(
                "UPDATE courier_schema SET version = 99 WHERE component = 'cache'",
                on: database
            )
            let fresh = PostgresCacheStore(database: try FleetDatabase.opened(url: url))
            let error = await courierError { try await fresh.prepare() }
            #expect(
                error?.code == .database
                    && error?.message.contains("newer Courier (schema 99; this one reads 1)") == true
            )
            await fresh.store(sampleEntry("a"))  // never throws: the request it serves goes on
            #expect(await fresh.entry(for: CacheKey(text: sampleEntry("a").key)) == nil)
            await fresh.database.close()
        }
    }

    @Test func badAddressesAndPasswordsGiveOneClearErrorEach() async throws {
        let malformed = await courierError { _ = try FleetDatabase.opened(url: "mysql://db/app") }
        #expect(
            malformed?.code == .invalidParameter
                && malformed?.message.contains("does not start with postgres://") == true
        )
        let noUser = await courierError { _ = try FleetDatabase.opened(url: "postgres://127.0.0.1/app") }
        #expect(noUser?.message.contains("names no user") == true)
        let url = try #require(TestDatabase.url)
        let wrong = url.replacingOccurrences(
            of: #"://([^:@]+):[^@]*@"#,
            with: "://$1:not-the-password@",
            options: .regularExpression
        )
        let database = try FleetDatabase.opened(url: wrong)
        let refused = await courierError { try await PostgresCacheStore(database: database).prepare() }
        #expect(refused?.code == .database && refused?.message.contains("password authentication failed") == true)
        #expect(refused?.message.contains("not-the-password") == false)
        #expect(refused?.message.contains("***") == true)
        await database.close()
    }

    @Test func aDatabaseThatIsNotThereCostsABoundedWaitAndNoError() async throws {
        let database = try FleetDatabase.opened(url: "postgres://courier:courier@127.0.0.1:9/courier?sslmode=disable")
        let store = PostgresCacheStore(database: database, operationTimeout: .milliseconds(300))
        let start = ContinuousClock.now
        await store.store(sampleEntry("a"))
        #expect(await store.entry(for: CacheKey(text: sampleEntry("a").key)) == nil)
        #expect(ContinuousClock.now - start < .seconds(10))
        let error = await courierError { try await store.prepare() }
        #expect(error?.code == .database)
        await database.close()
    }
}

/// A log handler that keeps the messages, for checking what a store logged.
struct LogLines: LogHandler {
    private let box = Box()
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    var messages: [String] { box.lines.withLock { $0 } }

    func log(event: LogEvent) {
        box.lines.withLock { $0.append(event.message.description) }
    }

    private final class Box: Sendable {
        let lines = Locked<[String]>([])
    }
}
