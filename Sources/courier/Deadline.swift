import Courier

/// `--timeout` for work that has no request-level total of its own (a download): the work is cancelled when the
/// time is up, and the timeout is what it fails with.
enum Deadline {
    /// Runs `work`; without `limit`, as it is.
    static func within(_ limit: Duration?, _ work: @escaping @Sendable () async throws -> Void) async throws {
        guard let limit else { return try await work() }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await work()
                return true
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return false
            }
            defer { group.cancelAll() }
            guard let finished = try await group.next(), finished else {
                throw CourierError.timeout(.total, after: limit)
            }
        }
    }
}
