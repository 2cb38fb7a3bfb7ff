import Courier
public import Logging
import NIOPosix
public import PostgresNIO
public import ServiceLifecycle

/// The PostgreSQL database a fleet of Courier processes shares: a PostgresNIO `PostgresClient` (its connection
/// pool), every operation bounded in time, every failure a ``/Courier/CourierError/Code/database`` that says what
/// the server said (never the password).
///
/// Make one per process and database and share it between a ``PostgresCacheStore``, a ``DownloadQueue`` and other
/// users. Its connection pool works while ``run()`` runs: it is a swift-service-lifecycle `Service`, so a server
/// lists it in its `ServiceGroup` before the services that use it (a group shuts its services down last to
/// first, so a ``DownloadWorker`` hands its jobs back before the database closes):
///
/// ```swift
/// import Logging
/// import ServiceLifecycle
///
/// let database = try FleetDatabase(url: "postgres://app:secret@db.internal/app")
/// let session = Session(configuration: Configuration {
///     $0.cache = ResponseCache(shared: PostgresCacheStore(database: database))
/// })
/// let group = ServiceGroup(services: [database, session], logger: Logger(label: "app"))
/// try await group.run()
/// ```
///
/// Outside a service group, ``withFleetDatabase(url:maxConnections:logger:isolation:_:)`` runs it for the
/// length of a closure.
public final class FleetDatabase: Sendable {
    /// Where the database is (without the password in its description).
    public let location: PostgresLocation
    /// The PostgresNIO client, for callers who want to run their own queries on the same pool.
    public let client: PostgresClient
    /// The components (``PostgresSchema/component``) whose tables this object has made sure of.
    private let preparedSchemas = Locked<Set<String>>([])

    /// Connects (lazily, on first use, while ``run()`` runs) to the database at `location`, with at most
    /// `maxConnections` open.
    public init(
        _ location: PostgresLocation,
        maxConnections: Int = 8,
        logger: Logger = Logger(label: "courier.postgres")
    ) {
        var configuration = location.clientConfiguration
        configuration.options.maximumConnections = max(1, maxConnections)
        configuration.options.connectTimeout = .seconds(3)
        self.location = location
        // The pool logs each failed connection attempt at info level, every few seconds of an outage; the stores
        // log an outage once themselves.
        var poolLogger = logger
        poolLogger.logLevel = max(logger.logLevel, .warning)
        client = PostgresClient(configuration: configuration, backgroundLogger: poolLogger)
    }

    /// Connects to the database at `url` (see ``PostgresLocation``); throws ``/Courier/CourierError/Code/invalidParameter``
    /// for a malformed URL.
    public convenience init(
        url: String,
        maxConnections: Int = 8,
        logger: Logger = Logger(label: "courier.postgres")
    ) throws {
        self.init(try PostgresLocation(url: url), maxConnections: maxConnections, logger: logger)
    }

    /// Runs `body` while the connection pool runs (``run()`` in a child task), then closes every connection:
    /// the structured way to use the database outside a `ServiceGroup`.
    @discardableResult
    public func whileRunning<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (FleetDatabase) async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self, returning: Result.self, isolation: isolation) { group in
            group.addTask { await self.run() }
            defer { group.cancelAll() }
            return try await body(self)
        }
    }

    /// `operation` on the pool, given up after `limit` (the wait for a connection included): a server that is
    /// down or stuck costs the caller `limit`, not a hang. What is still running then is cancelled and finishes
    /// in the background. Failures become ``/Courier/CourierError/Code/database`` errors naming `what`.
    @discardableResult
    public func run<Result: Sendable>(
        _ what: String,
        within limit: Duration,
        _ operation: @escaping @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let client = client
        return try await bounded(what, within: limit) { try await operation(client) }
    }

    /// Connects once, outside the pool, and asks the server a trivial question: the pool retries a refused
    /// connection quietly until its caller gives up, so this is how a wrong address or password gets its own
    /// message (``/Courier/CourierError/Code/database``, with the server's words).
    public func check(within limit: Duration = .seconds(5)) async throws {
        let location = location
        try await bounded("connecting", within: limit) {
            let connection = try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(),
                configuration: try location.connectionConfiguration(),
                id: 0,
                logger: PostgresSchema.quiet
            ).get()
            defer { Task { try? await connection.close() } }
            try await connection.query("SELECT 1", logger: PostgresSchema.quiet)
        }
    }

    /// Makes sure `schema`'s tables exist: once per `FleetDatabase`, and again after ``run(_:on:within:preparingWithin:_:)``
    /// found one missing.
    func prepare(_ schema: PostgresSchema, within limit: Duration) async throws {
        guard !preparedSchemas.withLock({ $0.contains(schema.component) }) else { return }
        try await schema.prepare(in: self, within: limit)
        preparedSchemas.withLock { _ = $0.insert(schema.component) }
    }

    /// `operation` on `schema`'s tables, prepared first. A table dropped behind Courier's back (`undefined_table`)
    /// fails this call and is created again, empty, by the next.
    func run<Result: Sendable>(
        _ what: String,
        on schema: PostgresSchema,
        within limit: Duration,
        preparingWithin preparation: Duration,
        _ operation: @escaping @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        try await prepare(schema, within: preparation)
        do {
            return try await run(what, within: limit, operation)
        } catch {
            if Self.sqlState(of: error) == "42P01" { preparedSchemas.withLock { _ = $0.remove(schema.component) } }
            throw error
        }
    }

    /// `body`, given up after `limit` (see ``run(_:within:_:)``), its failures as ``/Courier/CourierError/Code/database``.
    private func bounded<Result: Sendable>(
        _ what: String,
        within limit: Duration,
        _ body: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let location = location
        return try await Bounded.run(within: limit, timedOut: { Self.noAnswer(from: location, within: limit, what) }) {
            do { return try await body() } catch { throw Self.failure(error, doing: what, at: location) }
        }
    }

    /// The error of a database that did not answer `what` within `limit`.
    static func noAnswer(from location: PostgresLocation, within limit: Duration, _ what: String) -> CourierError {
        CourierError(code: .database, message: "\(location) did not answer within \(limit.formattedSeconds) (\(what))")
    }

    /// `error` as a ``/Courier/CourierError/Code/database`` error that names the database and says what the server said.
    static func failure(_ error: any Error, doing what: String, at location: PostgresLocation) -> CourierError {
        if let error = error as? CourierError { return error }
        return CourierError(
            code: .database,
            message: "\(location): \(what) failed: \(describe(error))",
            underlying: error
        )
    }

    /// What went wrong, from the server's message and SQLSTATE when there is one; PSQLError's own description
    /// says only "generic error" on purpose.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let info = error.serverInfo, let message = info[.message] {
            return "\(message) (SQLSTATE \(info[.sqlState] ?? "?"))"
        }
        if let underlying = error.underlying { return "\(error.code): \(underlying)" }
        return "\(error.code)"
    }

    /// The SQLSTATE of a failed query, if the server sent one.
    static func sqlState(of error: any Error) -> String? {
        let error = ((error as? CourierError)?.underlying ?? error) as? PSQLError
        return error?.serverInfo?[.sqlState]
    }
}

extension FleetDatabase: Service {
    /// Runs the connection pool (PostgresNIO's `PostgresClient.run()`) until graceful shutdown or cancellation,
    /// then closes every connection; operations after that fail with ``/Courier/CourierError/Code/database``.
    public func run() async {
        let client = client
        await cancelWhenGracefulShutdown { await client.run() }
    }
}

/// Runs `body` with a ``FleetDatabase`` for the database at `url` whose connection pool runs until `body` returns
/// or throws; then every connection is closed. Throws ``/Courier/CourierError/Code/invalidParameter`` for a
/// malformed URL.
@discardableResult
public func withFleetDatabase<Result>(
    url: String,
    maxConnections: Int = 8,
    logger: Logger = Logger(label: "courier.postgres"),
    isolation: isolated (any Actor)? = #isolation,
    _ body: (FleetDatabase) async throws -> Result
) async throws -> Result {
    let database = try FleetDatabase(url: url, maxConnections: maxConnections, logger: logger)
    return try await database.whileRunning(isolation: isolation, body)
}
