public import Courier
import PostgresNIO

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A download queue in PostgreSQL that any number of ``DownloadWorker``s, on one machine or many, work through
/// together: each job is claimed by one worker at a time (`SELECT … FOR UPDATE SKIP LOCKED`) under a lease the
/// worker renews while it downloads. A worker that dies stops renewing; when its lease runs out, another worker
/// claims the job and continues from the `.part` file and resume record the dead one left in the shared
/// destination directory.
///
/// ```swift
/// let queue = DownloadQueue(database: try FleetDatabase(url: "postgres://app:secret@db.internal/app"))
/// try await queue.add(URL(string: "https://files.example/a.iso")!, to: URL(filePath: "/shared/a.iso"))
/// for await status in queue.progress(every: .seconds(1)) { print(status) }
/// ```
///
/// Every operation waits at most ``operationTimeout`` and throws ``/Courier/CourierError/Code/database`` when the database
/// fails or does not answer; the workers wait and go on.
public final class DownloadQueue: Sendable {
    /// The database the jobs live in.
    public let database: FleetDatabase
    /// The longest one operation may take.
    public let operationTimeout: Duration

    static let schema = PostgresSchema(
        component: "download-queue",
        version: 1,
        statements: [
            """
            CREATE TABLE IF NOT EXISTS courier_download_jobs (
                id bigserial PRIMARY KEY,
                url text NOT NULL,
                destination text NOT NULL UNIQUE,
                checksum text,
                priority integer NOT NULL DEFAULT 0,
                connections integer NOT NULL DEFAULT 1,
                state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'completed', 'failed')),
                attempts integer NOT NULL DEFAULT 0,
                max_attempts integer NOT NULL DEFAULT 5,
                worker text,
                lease_until timestamptz,
                completed_bytes bigint NOT NULL DEFAULT 0,
                total_bytes bigint,
                last_error text,
                added_at timestamptz NOT NULL DEFAULT now(),
                finished_at timestamptz
            )
            """,
            "CREATE INDEX IF NOT EXISTS courier_download_jobs_claim ON courier_download_jobs (state, priority DESC, id)",
        ]
    )

    /// A queue in `database`; its table is created on first use.
    public init(database: FleetDatabase, operationTimeout: Duration = .seconds(5)) {
        self.database = database
        self.operationTimeout = operationTimeout
    }

    /// Creates the table when it is missing; throws ``/Courier/CourierError/Code/database`` naming what is wrong (address,
    /// password, a table written by a newer Courier).
    public func prepare() async throws {
        try await database.prepare(Self.schema, within: preparationTimeout)
    }

    /// Preparing the table may take longer than one operation (a first connection, a lock other processes hold).
    private var preparationTimeout: Duration { max(operationTimeout, .seconds(5)) }

    // MARK: Adding and reading

    /// Adds a job and returns its number. A destination the queue already has keeps its job (a failed one is
    /// queued again, with its attempts reset); one destination is one file.
    ///
    /// A relative destination is taken from the current directory. Throws ``/Courier/CourierError/Code/invalidURL`` for a
    /// URL that is not http(s) and ``/Courier/CourierError/Code/invalidParameter`` for a directory as the destination or
    /// `maxAttempts` below 1.
    @discardableResult
    public func add(
        _ url: URL,
        to destination: URL,
        checksum: DownloadChecksum? = nil,
        priority: Int = 0,
        connections: Int = 1,
        maxAttempts: Int = 5
    ) async throws -> Int64 {
        try URLBuilder.validate(url)
        let path = destination.standardizedFileURL.path(percentEncoded: false)
        let isFolder = FileManager.default.isDirectory(atPath: path)
        guard destination.isFileURL, !destination.hasDirectoryPath, !isFolder, path.hasPrefix("/") else {
            throw CourierError(
                code: .invalidParameter,
                message: "a queued download needs the path of a file, not \(destination.path)"
            )
        }
        guard maxAttempts >= 1, (1...64).contains(connections) else {
            throw CourierError(code: .invalidParameter, message: "maxAttempts must be at least 1 and connections 1…64")
        }
        let text = url.absoluteString
        let digest = checksum?.description
        return try await run("adding a job") { client in
            let rows = try await client.query(
                """
                INSERT INTO courier_download_jobs (url, destination, checksum, priority, connections, max_attempts)
                VALUES (\(text), \(path), \(digest), \(priority), \(connections), \(maxAttempts))
                ON CONFLICT (destination) DO UPDATE SET
                    state = CASE WHEN courier_download_jobs.state = 'failed' THEN 'queued' ELSE courier_download_jobs.state END,
                    attempts = CASE WHEN courier_download_jobs.state = 'failed' THEN 0 ELSE courier_download_jobs.attempts END
                RETURNING id
                """,
                logger: PostgresSchema.quiet
            )
            for try await id in rows.decode(Int64.self) { return id }
            throw CourierError(code: .database, message: "adding a job returned no row")
        }
    }

    /// Every job, by number (at most `limit`).
    public func jobs(limit: Int = 10_000) async throws -> [DownloadJob] {
        try await select("ORDER BY id LIMIT \(max(0, limit))")
    }

    /// The job numbered `id`, if there is one.
    public func job(_ id: Int64) async throws -> DownloadJob? {
        try await select("WHERE id = \(id)").first
    }

    /// Counts and bytes of the whole queue (``DownloadQueueStatus/bytesPerSecond`` is 0: one reading has no rate).
    public func status() async throws -> DownloadQueueStatus {
        try await run("reading the queue's status") { client in
            let rows = try await client.query(
                """
                SELECT state, count(*)::bigint, coalesce(sum(completed_bytes), 0)::bigint, coalesce(sum(total_bytes), 0)::bigint
                FROM courier_download_jobs GROUP BY state
                """,
                logger: PostgresSchema.quiet
            )
            var status = DownloadQueueStatus(
                counts: Dictionary(uniqueKeysWithValues: DownloadJob.State.allCases.map { ($0, 0) }),
                completedBytes: 0,
                totalBytes: 0,
                bytesPerSecond: 0
            )
            for try await (state, count, completed, total) in rows.decode((String, Int, Int64, Int64).self) {
                guard let state = DownloadJob.State(rawValue: state) else { continue }
                status.counts[state] = count
                status.completedBytes += completed
                status.totalBytes += total
            }
            return status
        }
    }

    /// The queue's status every `interval`, with the rate between readings; a reading the database could not
    /// give is skipped. Ends when the consumer stops.
    public func progress(every interval: Duration = .seconds(1)) -> AsyncStream<DownloadQueueStatus> {
        AsyncStream { continuation in
            let task = Task {
                var previous: (bytes: Int64, at: ContinuousClock.Instant)?
                while !Task.isCancelled {
                    if var status = try? await self.status() {
                        let now = ContinuousClock.now
                        if let previous, now > previous.at {
                            status.bytesPerSecond = max(
                                0,
                                Double(status.completedBytes - previous.bytes) / (now - previous.at).seconds
                            )
                        }
                        previous = (status.completedBytes, now)
                        continuation.yield(status)
                    }
                    try? await Task.sleep(for: interval)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The job numbered `id` every `interval` until it has completed or failed (then once more, and the stream
    /// ends); a job that is not there ends it at once.
    public func updates(of id: Int64, every interval: Duration = .seconds(1)) -> AsyncStream<DownloadJob> {
        AsyncStream { continuation in
            let task = Task {
                while !Task.isCancelled {
                    do {
                        guard let job = try await self.job(id) else { break }
                        continuation.yield(job)
                        if job.state == .completed || job.state == .failed { break }
                    } catch {}  // the database did not answer this time: try again at the next tick
                    try? await Task.sleep(for: interval)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Removes the jobs numbered `ids` (their files stay); returns how many there were. A running job's worker
    /// finds it gone at its next renewal and stops.
    @discardableResult
    public func remove(_ ids: [Int64]) async throws -> Int {
        try await run("removing jobs") { client in
            var count = 0
            for try await _ in try await client.query(
                "DELETE FROM courier_download_jobs WHERE id = ANY(\(ids)) RETURNING 1",
                logger: PostgresSchema.quiet
            ).decode(Int.self) { count += 1 }
            return count
        }
    }

    // MARK: What workers do

    /// Claims the most urgent job no one holds (queued, or running under a lease that ran out) for `worker`, other
    /// than the jobs in `held`, which the worker is still working on.
    func claim(for worker: String, lease: Duration, except held: Set<Int64> = []) async throws -> DownloadJob? {
        let seconds = lease.seconds
        let held = Array(held)
        return try await jobs(doing: "claiming a job") { client in
            try await client.query(
                """
                UPDATE courier_download_jobs SET state = 'running', worker = \(worker), attempts = attempts + 1,
                    lease_until = now() + make_interval(secs => \(seconds))
                WHERE id = (SELECT id FROM courier_download_jobs
                            WHERE (state = 'queued' OR (state = 'running' AND lease_until < now())) AND id <> ALL(\(held))
                            ORDER BY priority DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED)
                RETURNING \(unescaped: Self.columns)
                """,
                logger: PostgresSchema.quiet
            )
        }.first
    }

    /// Extends `worker`'s lease of job `id` and records its progress; `false` when the worker no longer holds it.
    func renew(_ id: Int64, for worker: String, lease: Duration, progress: DownloadProgress) async throws -> Bool {
        let seconds = lease.seconds
        let completed = progress.completedBytes
        let total = progress.totalBytes
        return try await changed("renewing a lease") { client in
            try await client.query(
                """
                UPDATE courier_download_jobs SET lease_until = now() + make_interval(secs => \(seconds)),
                    completed_bytes = \(completed), total_bytes = coalesce(\(total), total_bytes)
                WHERE id = \(id) AND worker = \(worker) AND state = 'running' RETURNING 1
                """,
                logger: PostgresSchema.quiet
            )
        }
    }

    /// Marks job `id` completed (once: `false` when `worker` no longer holds it).
    func complete(_ id: Int64, for worker: String, bytes: Int64) async throws -> Bool {
        try await changed("completing a job") { client in
            try await client.query(
                """
                UPDATE courier_download_jobs SET state = 'completed', worker = NULL, lease_until = NULL, completed_bytes = \(bytes),
                    total_bytes = \(bytes), last_error = NULL, finished_at = now()
                WHERE id = \(id) AND worker = \(worker) AND state = 'running' RETURNING 1
                """,
                logger: PostgresSchema.quiet
            )
        }
    }

    /// Ends `worker`'s attempt at job `id` with `error`: failed for good when `permanent` or out of attempts,
    /// queued again otherwise.
    func release(_ id: Int64, for worker: String, error: CourierError, permanent: Bool) async throws -> Bool {
        let reason = "\(error.code): \(error.message)"
        return try await changed("recording a failure") { client in
            try await client.query(
                """
                UPDATE courier_download_jobs SET
                    state = CASE WHEN \(permanent) OR attempts >= max_attempts THEN 'failed' ELSE 'queued' END,
                    finished_at = CASE WHEN \(permanent) OR attempts >= max_attempts THEN now() END,
                    worker = NULL, lease_until = NULL, last_error = \(reason)
                WHERE id = \(id) AND worker = \(worker) AND state = 'running' RETURNING 1
                """,
                logger: PostgresSchema.quiet
            )
        }
    }

    /// Gives job `id` back to the queue without counting the attempt (a worker that stops on purpose).
    func handBack(_ id: Int64, for worker: String) async throws -> Bool {
        try await changed("handing a job back") { client in
            try await client.query(
                """
                UPDATE courier_download_jobs SET state = 'queued', worker = NULL, lease_until = NULL, attempts = greatest(attempts - 1, 0)
                WHERE id = \(id) AND worker = \(worker) AND state = 'running' RETURNING 1
                """,
                logger: PostgresSchema.quiet
            )
        }
    }

    // MARK: Running queries

    private static let columns = """
        id, url, destination, checksum, priority, connections, state, attempts, max_attempts, worker, completed_bytes, total_bytes, last_error
        """

    /// The jobs `SELECT … FROM courier_download_jobs <clause>` finds.
    private func select(_ clause: String) async throws -> [DownloadJob] {
        try await jobs(doing: "reading jobs") { client in
            try await client.query(
                PostgresQuery(unsafeSQL: "SELECT \(Self.columns) FROM courier_download_jobs \(clause)"),
                logger: PostgresSchema.quiet
            )
        }
    }

    /// The jobs in the rows `query` returns (each with ``columns``).
    private func jobs(
        doing what: String,
        _ query: @escaping @Sendable (PostgresClient) async throws -> PostgresRowSequence
    ) async throws -> [DownloadJob] {
        try await run(what) { client in
            var jobs: [DownloadJob] = []
            for try await row in try await query(client) {
                let (
                    id, url, destination, checksum, priority, connections, state, attempts, maxAttempts, worker,
                    completed, total, error
                ) = try row.decode(
                    (Int64, String, String, String?, Int, Int, String, Int, Int, String?, Int64, Int64?, String?).self
                )
                guard let link = URL(string: url), let state = DownloadJob.State(rawValue: state) else {
                    throw CourierError(code: .database, message: "job \(id) has an unreadable URL or state")
                }
                let digest = try checksum.map { try DownloadChecksum(stored: $0) }
                jobs.append(
                    DownloadJob(
                        id: id,
                        url: link,
                        destination: URL(filePath: destination),
                        checksum: digest,
                        priority: priority,
                        connections: connections,
                        state: state,
                        attempts: attempts,
                        maxAttempts: maxAttempts,
                        worker: worker,
                        completedBytes: completed,
                        totalBytes: total,
                        lastError: error
                    )
                )
            }
            return jobs
        }
    }

    private func changed(
        _ what: String,
        _ query: @escaping @Sendable (PostgresClient) async throws -> PostgresRowSequence
    ) async throws -> Bool {
        try await run(what) { client in
            for try await _ in try await query(client) { return true }
            return false
        }
    }

    private func run<Result: Sendable>(
        _ what: String,
        _ operation: @escaping @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        do {
            return try await database.run(
                what,
                on: Self.schema,
                within: operationTimeout,
                preparingWithin: preparationTimeout,
                operation
            )
        } catch let error where FleetDatabase.sqlState(of: error) == "42P01" {
            // undefined_table: dropped behind the queue's back
            throw CourierError(
                code: .database,
                message: "\(database.location): the table courier_download_jobs is missing "
                    + "(it is created again on the next call, empty)",
                underlying: error
            )
        }
    }
}
