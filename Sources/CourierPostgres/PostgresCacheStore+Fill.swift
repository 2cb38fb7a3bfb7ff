public import Courier
import Logging
import PostgresNIO

extension PostgresCacheStore {
    /// One fetch per missing key across every process that shares the database. The process that takes the key's
    /// advisory lock (`pg_try_advisory_lock`, held on a pooled connection while it fetches) fetches; the others
    /// poll every ``pollInterval`` for its entry or the lock. Death of the fetching process closes its connection,
    /// which releases the lock, so the next poll takes over. When the database cannot be reached within
    /// ``operationTimeout``, or `deadline` passes, the caller fetches itself.
    public nonisolated func fill<Fetched: Sendable>(
        _ key: CacheKey,
        waitingUntil deadline: ContinuousClock.Instant,
        fetch: @Sendable () async throws -> Fetched
    ) async throws -> CacheFill<Fetched> {
        let lock = Self.lockID(key)
        var interval = pollInterval
        while ContinuousClock.now < deadline {
            switch await AdvisoryLock.take(lock, on: database, within: operationTimeout) {
            case .held(let held):
                defer { held.release() }
                // stored while this one was taking the lock
                if let entry = await entry(for: key) { return .filled(entry) }
                return .fetched(try await fetch())
            case .busy:
                try await Task.sleep(for: min(interval, max(.zero, deadline - .now)))
                interval = min(interval * 2, pollInterval * 5)
                if let entry = await entry(for: key) { return .filled(entry) }
            case .unavailable(let error):
                await noteFailure(error)
                return .fetched(try await fetch())
            }
        }
        return .fetched(try await fetch())
    }

    /// The advisory lock of `key`: the first 64 bits of its SHA-256. Two keys that share them only make one wait
    /// for the other's fetch.
    static func lockID(_ key: CacheKey) -> Int64 {
        Int64(bitPattern: UInt64(key.digest.prefix(16), radix: 16) ?? 0)
    }
}

/// A session-level advisory lock held on a pooled connection by a task of its own until ``Held/release()``, so
/// the caller can do other work (the fetch) in its own task meanwhile.
enum AdvisoryLock {
    enum Attempt: Sendable {
        /// This process holds the lock until it calls `release()`.
        case held(Held)
        /// Another session holds it.
        case busy
        /// The database could not be asked in time.
        case unavailable(any Error)
    }

    /// The holding task's end of the lock: releasing it unlocks and returns the connection to the pool.
    struct Held: Sendable {
        fileprivate let continuation: AsyncStream<Void>.Continuation
        func release() { continuation.finish() }
    }

    static func take(_ id: Int64, on database: FleetDatabase, within limit: Duration) async -> Attempt {
        let (releases, release) = AsyncStream<Void>.makeStream()
        let (attempts, answer) = AsyncStream<Attempt>.makeStream(bufferingPolicy: .bufferingOldest(1))
        let client = database.client
        let holder = Task {
            do {
                try await client.withConnection { connection in
                    var taken = false
                    for try await value in try await connection.query(
                        "SELECT pg_try_advisory_lock(\(id))",
                        logger: PostgresSchema.quiet
                    ).decode(Bool.self) { taken = value }
                    guard taken else {
                        answer.yield(.busy)
                        return
                    }
                    answer.yield(.held(Held(continuation: release)))
                    for await _ in releases {}  // until released (or the caller gave up, which finishes the stream too)
                    try await connection.query("SELECT pg_advisory_unlock(\(id))", logger: PostgresSchema.quiet)
                }
            } catch {
                answer.yield(
                    .unavailable(FleetDatabase.failure(error, doing: "taking a fill lock", at: database.location))
                )
            }
            answer.finish()
        }
        let timer = Task {
            try? await Task.sleep(for: limit)
            if !Task.isCancelled {
                answer.yield(
                    .unavailable(FleetDatabase.noAnswer(from: database.location, within: limit, "taking a fill lock"))
                )
            }
        }
        var first: Attempt = .unavailable(
            CourierError(code: .database, message: "taking a fill lock ended without an answer")
        )
        for await attempt in attempts {
            first = attempt
            break
        }
        timer.cancel()
        if case .held = first { return first }
        release.finish()  // a lock taken after the caller gave up is released at once
        holder.cancel()
        return first
    }
}
