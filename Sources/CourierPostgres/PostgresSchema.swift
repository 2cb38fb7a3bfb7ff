import Courier
import Logging
import PostgresNIO

/// The tables of one part of Courier (the cache, the download queue) and the schema version they follow,
/// recorded in `courier_schema (component, version)`.
///
/// ``prepare(in:)`` creates what is missing under a transaction-scoped advisory lock, so many processes starting
/// at once create each table once; a table written by a newer Courier (a higher version) is refused with a
/// ``/Courier/CourierError/Code/database`` error rather than read wrongly.
struct PostgresSchema: Sendable {
    /// The component's name in `courier_schema`.
    let component: String
    /// The version these statements create.
    let version: Int
    /// `CREATE … IF NOT EXISTS` statements: run every time, so a dropped table comes back.
    let statements: [String]

    /// The lock every preparation takes (`hashtext('courier_schema')` would do, spelled as a constant).
    private static let lockKey: Int64 = 0x436F_7572_6965_7201

    func prepare(in database: FleetDatabase, within limit: Duration = .seconds(10)) async throws {
        try await database.check(within: limit)
        let component = component
        let version = version
        let statements = statements
        try await database.run("preparing the \(component) tables", within: limit) { client in
            try await client.withTransaction(logger: Self.quiet) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.lockKey))", logger: Self.quiet)
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS courier_schema (component text PRIMARY KEY, version integer NOT NULL)
                    """,
                    logger: Self.quiet
                )
                var stored: Int?
                for try await found in try await connection.query(
                    "SELECT version FROM courier_schema WHERE component = \(component)",
                    logger: Self.quiet
                ).decode(Int.self) {
                    stored = found
                }
                if let stored, stored > version {
                    throw CourierError(
                        code: .database,
                        message: "\(database.location): the \(component) tables were written by a newer "
                            + "Courier (schema \(stored); this one reads \(version)); upgrade Courier or use another database"
                    )
                }
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: Self.quiet)
                }
                try await connection.query(
                    """
                    INSERT INTO courier_schema (component, version) VALUES (\(component), \(version))
                    ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version
                    """,
                    logger: Self.quiet
                )
            }
        }
    }

    /// PostgresNIO logs each query at debug level; Courier logs what matters itself.
    static let quiet = Logger(label: "courier.postgres.query", factory: { _ in SwiftLogNoOpLogHandler() })
}
