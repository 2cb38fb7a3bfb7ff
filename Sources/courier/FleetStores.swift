import Courier
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if Postgres
import CourierPostgres
#endif

/// What the CLI keeps in PostgreSQL (`--cache-store postgres://…`, `courier queue`): built with the `Postgres`
/// package trait, which keeps postgres-nio out of a plain `swift run courier demo`.
enum FleetStores {
    /// Warnings of the shared stores go to standard error: standard output holds bodies and paths.
    static let logger = Logger(label: "courier") { StreamLogHandler.standardError(label: $0) }

    /// What a build without them says.
    static let missing = CourierError(
        code: .invalidParameter,
        message: "this courier was built without PostgreSQL support; "
            + "build it with `swift build --traits Postgres` (or `swift run --traits Postgres courier …`)"
    )

    /// Whether `text` names a database rather than a directory.
    static func isDatabase(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// The cache store `place` names: a `postgres://` URL (a cache shared by a fleet) or a directory. A
    /// database is not asked yet: a shared store never fails a request (it logs an outage once and misses).
    static func cacheStore(_ place: String) throws -> any CacheStorage {
        // An empty place would be the working directory, filled with entries the user never asked to keep there.
        guard !place.isEmpty else {
            throw CourierError(
                code: .invalidParameter,
                message: "the cache store is empty; give a directory or postgres://USER:PASSWORD@HOST:PORT/DB"
            )
        }
        guard isDatabase(place) else {
            return try DiskCacheStore(directory: URL(filePath: place, directoryHint: .isDirectory))
        }
        #if Postgres
        let database = try FleetDatabase(url: place, logger: logger)
        CommandScope.start(database)  // its connection pool runs while the command does
        return PostgresCacheStore(database: database, logger: logger)
        #else
        throw missing
        #endif
    }

    /// The same, with a database asked first, so a wrong address, password or schema is one clear error (for
    /// `courier cache`, which has no request to keep going).
    static func preparedCacheStore(_ place: String) async throws -> any CacheStorage {
        let store = try cacheStore(place)
        #if Postgres
        try await (store as? PostgresCacheStore)?.prepare()
        #endif
        return store
    }
}
