public import Courier
public import Logging
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A response cache store in PostgreSQL, shared by every process that uses the same database: what one instance
/// of a service fetched, the others read. Put it where a ``/Courier/DiskCacheStore`` goes:
///
/// ```swift
/// let database = try FleetDatabase(url: "postgres://app:secret@db.internal/app")
/// let cache = ResponseCache(shared: PostgresCacheStore(database: database))
/// let session = Session(configuration: Configuration { $0.baseURL = api; $0.cache = cache })
/// ```
///
/// - Each entry is a row of `courier_cache` whose `entry` column holds exactly what the disk store writes to a
///   file (``/Courier/CacheCompression`` for the body, a SHA-256 over the rest): a damaged row is a miss and is removed,
///   never served. The other columns (key, URL, sizes, times) serve listings and eviction.
/// - Eviction keeps the stored bytes under ``maxBytes`` (least recently read first, by `accessed_at`) and drops
///   entries older than ``maxAge``. One process evicts at a time (a transaction-scoped advisory lock); the
///   others skip it.
/// - A miss is filled once across the fleet (``/Courier/CacheFillCoordinator``): one process fetches, the others wait for
///   its entry, polling; a process that dies while fetching releases its lock with its connection, and the next
///   one takes over.
/// - The database down or slow never fails a request: each operation is bounded by ``operationTimeout`` and a
///   failure is a miss (or a dropped write), logged once per outage. When the database is back, the store is
///   used again, without a restart.
public actor PostgresCacheStore: CacheStorage, CacheFillCoordinator {
    /// The database the entries live in.
    public nonisolated let database: FleetDatabase
    /// The most bytes the entries may take together (the `entry` column).
    public nonisolated let maxBytes: Int
    /// Entries stored longer ago than this are removed; `nil` keeps them until evicted for space.
    public nonisolated let maxAge: Duration?
    /// How bodies are compressed.
    public nonisolated let compression: CacheCompression
    /// The longest one operation may take (the wait for a connection included) before it counts as a miss.
    public nonisolated let operationTimeout: Duration
    /// How often a process waiting for another's fetch looks for its entry.
    public nonisolated let pollInterval: Duration

    private var outage: OutageLog
    private var storesSinceEviction = 0

    /// How many stores go by between two evictions (one process runs each; the first store evicts too).
    private static let storesPerEviction = 32
    /// The advisory lock the evicting process holds for its transaction.
    static let evictionLock: Int64 = 0x436F_7572_6965_7202

    static let schema = PostgresSchema(
        component: "cache",
        version: 1,
        statements: [
            """
            CREATE TABLE IF NOT EXISTS courier_cache (
                digest text PRIMARY KEY,
                key text NOT NULL,
                method text NOT NULL,
                url text NOT NULL,
                status integer NOT NULL,
                stored_at timestamptz NOT NULL,
                expires_at timestamptz,
                accessed_at timestamptz NOT NULL DEFAULT now(),
                body_bytes bigint NOT NULL,
                stored_body_bytes bigint NOT NULL,
                stored_bytes bigint NOT NULL,
                compressed boolean NOT NULL,
                entry bytea NOT NULL
            )
            """,
            "CREATE INDEX IF NOT EXISTS courier_cache_accessed_at ON courier_cache (accessed_at)",
        ]
    )

    /// A store in `database`; its table is created on first use.
    public init(
        database: FleetDatabase,
        maxBytes: Int = 1 << 30,
        maxAge: Duration? = nil,
        compression: CacheCompression = CacheCompression(),
        operationTimeout: Duration = .seconds(1),
        pollInterval: Duration = .milliseconds(20),
        logger: Logger = Logger(label: "courier.cache.postgres")
    ) {
        self.database = database
        self.maxBytes = max(0, maxBytes)
        self.maxAge = maxAge
        self.compression = compression
        self.operationTimeout = operationTimeout
        self.pollInterval = pollInterval
        self.outage = OutageLog(logger: logger, what: "the shared cache at \(database.location)")
    }

    /// Creates the table when it is missing. The store does this on first use; call it to find out early (and
    /// with a clear ``/Courier/CourierError/Code/database`` or ``/Courier/CourierError/Code/timeout``) that the address, the
    /// password or the schema is wrong, since the store's own operations turn every failure into a miss.
    public func prepare() async throws {
        try await database.prepare(Self.schema, within: preparationTimeout)
    }

    /// Preparing the table may take longer than one operation (a first connection, a lock other processes hold).
    private var preparationTimeout: Duration { max(operationTimeout, .seconds(5)) }

    // MARK: CacheStorage

    public func entry(for key: CacheKey) async -> CacheEntry? {
        let digest = key.digest
        guard
            let file = await attempt(
                "reading an entry",
                { client in
                    var file: Data?
                    let rows = try await client.query(
                        "UPDATE courier_cache SET accessed_at = now() WHERE digest = \(digest) RETURNING entry",
                        logger: PostgresSchema.quiet
                    )
                    for try await found in rows.decode(Data.self) { file = found }
                    return file
                }
            ) ?? nil
        else { return nil }
        guard let entry = try? CacheEntryCodec.decode(file), entry.key == key.text else {
            outage.logger.warning("a shared cache entry is damaged or belongs to another key; it is removed")
            await removeEntry(for: key)
            return nil
        }
        if let maxAge, Date().timeIntervalSince(entry.storedAt) > Double(maxAge.components.seconds) {
            await removeEntry(for: key)
            return nil
        }
        return entry
    }

    public func store(_ entry: CacheEntry) async {
        let key = CacheKey(text: entry.key)
        let (file, storedBodyBytes, isCompressed) = CacheEntryCodec.encode(entry, compression: compression)
        guard file.count <= maxBytes else {
            await removeEntry(for: key)
            return
        }
        let digest = key.digest
        let summary = entry.summary
        let written: Void? = await attempt("storing an entry") { client in
            try await client.query(
                """
                INSERT INTO courier_cache (digest, key, method, url, status, stored_at, expires_at, accessed_at, body_bytes,
                                           stored_body_bytes, stored_bytes, compressed, entry)
                VALUES (\(digest), \(summary.key), \(summary.method), \(summary.url), \(summary.status), \(summary.storedAt),
                        \(summary.expiresAt), now(), \(summary.bodyBytes), \(storedBodyBytes), \(file.count), \(isCompressed), \(file))
                ON CONFLICT (digest) DO UPDATE SET key = EXCLUDED.key, method = EXCLUDED.method, url = EXCLUDED.url,
                    status = EXCLUDED.status, stored_at = EXCLUDED.stored_at, expires_at = EXCLUDED.expires_at, accessed_at = now(),
                    body_bytes = EXCLUDED.body_bytes, stored_body_bytes = EXCLUDED.stored_body_bytes,
                    stored_bytes = EXCLUDED.stored_bytes, compressed = EXCLUDED.compressed, entry = EXCLUDED.entry
                """,
                logger: PostgresSchema.quiet
            )
        }
        guard written != nil else { return }
        if storesSinceEviction % Self.storesPerEviction == 0 { await evict() }
        storesSinceEviction += 1
    }

    @discardableResult
    public func removeEntry(for key: CacheKey) async -> Bool {
        let digest = key.digest
        return await attempt("removing an entry") { client in
            var removed = false
            for try await _ in try await client.query(
                "DELETE FROM courier_cache WHERE digest = \(digest) RETURNING 1",
                logger: PostgresSchema.quiet
            ).decode(Int.self) { removed = true }
            return removed
        } ?? false
    }

    @discardableResult
    public func removeEntries(where matches: @Sendable (CacheEntrySummary) -> Bool) async -> Int {
        let digests = await summaries().filter(matches).map { CacheKey(text: $0.key).digest }
        guard !digests.isEmpty else { return 0 }
        return await attempt("removing entries") { client in
            var count = 0
            for try await _ in try await client.query(
                "DELETE FROM courier_cache WHERE digest = ANY(\(digests)) RETURNING 1",
                logger: PostgresSchema.quiet
            ).decode(Int.self) { count += 1 }
            return count
        } ?? 0
    }

    public func summaries() async -> [CacheEntrySummary] {
        await attempt("listing entries") { client in
            let rows = try await client.query(
                """
                SELECT key, method, url, status, stored_at, expires_at, body_bytes, stored_bytes
                FROM courier_cache ORDER BY stored_at DESC
                """,
                logger: PostgresSchema.quiet
            )
            var summaries: [CacheEntrySummary] = []
            for try await (key, method, url, status, storedAt, expiresAt, bodyBytes, storedBytes)
                in rows.decode((String, String, String, Int, Date, Date?, Int, Int).self)
            {
                summaries.append(
                    CacheEntrySummary(
                        key: key,
                        method: method,
                        url: url,
                        status: status,
                        storedAt: storedAt,
                        expiresAt: expiresAt,
                        bodyBytes: bodyBytes,
                        storedBytes: storedBytes
                    )
                )
            }
            return summaries
        } ?? []
    }

    public func statistics() async -> CacheStoreStatistics {
        await attempt("counting entries") { client in
            let rows = try await client.query(
                """
                SELECT count(*)::bigint, coalesce(sum(stored_bytes), 0)::bigint, coalesce(sum(body_bytes), 0)::bigint,
                       coalesce(sum(stored_body_bytes), 0)::bigint, (count(*) FILTER (WHERE NOT compressed))::bigint
                FROM courier_cache
                """,
                logger: PostgresSchema.quiet
            )
            var statistics = CacheStoreStatistics()
            for try await (count, stored, body, storedBody, uncompressed) in rows.decode((Int, Int, Int, Int, Int).self)
            {
                statistics = CacheStoreStatistics(
                    entryCount: count,
                    storedBytes: stored,
                    bodyBytes: body,
                    storedBodyBytes: storedBody,
                    uncompressedEntries: uncompressed
                )
            }
            return statistics
        } ?? CacheStoreStatistics()
    }

    // MARK: Eviction

    /// Drops entries past ``maxAge`` and the least recently read beyond ``maxBytes``, when no other process is
    /// doing it.
    public func evict() async {
        let maxBytes = maxBytes
        let cutoff = maxAge.map { Date().addingTimeInterval(-Double($0.components.seconds)) }
        let _: Void? = await attempt("evicting") { client in
            try await client.withTransaction(logger: PostgresSchema.quiet) { connection in
                var isEvicting = false
                for try await taken in try await connection.query(
                    "SELECT pg_try_advisory_xact_lock(\(Self.evictionLock))",
                    logger: PostgresSchema.quiet
                ).decode(Bool.self) { isEvicting = taken }
                guard isEvicting else { return }
                if let cutoff {
                    try await connection.query(
                        "DELETE FROM courier_cache WHERE stored_at < \(cutoff)",
                        logger: PostgresSchema.quiet
                    )
                }
                try await connection.query(
                    """
                    DELETE FROM courier_cache WHERE digest IN (
                        SELECT digest FROM (
                            SELECT digest, sum(stored_bytes) OVER (ORDER BY accessed_at DESC, digest) AS running FROM courier_cache
                        ) AS ranked WHERE running > \(maxBytes))
                    """,
                    logger: PostgresSchema.quiet
                )
            }
        }
    }

    // MARK: Running operations

    /// `operation` bounded by ``operationTimeout`` after the table is prepared; `nil` (logged once per outage)
    /// when it fails. A table dropped behind the store's back is created again on the next call.
    func attempt<Result: Sendable>(
        _ what: String,
        _ operation: @escaping @Sendable (PostgresClient) async throws -> Result
    ) async -> Result? {
        do {
            let result = try await database.run(
                what,
                on: Self.schema,
                within: operationTimeout,
                preparingWithin: preparationTimeout,
                operation
            )
            outage.succeeded()
            return result
        } catch {
            outage.failed(error)
            return nil
        }
    }

    /// Notes a failure of the fill coordination in the outage log.
    func noteFailure(_ error: any Error) {
        outage.failed(error)
    }
}
