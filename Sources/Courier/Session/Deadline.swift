/// Bounds an operation by a point in time.
enum Deadline {
    /// Runs `operation`, failing with `failure` (and cancelling it) if it is still running at `deadline`.
    ///
    /// AsyncHTTPClient's deadline stops at the response head; the body needs this race so a server that stalls
    /// mid-body cannot hold a request past its total timeout.
    static func race<Value: Sendable>(
        _ deadline: ContinuousClock.Instant,
        failure: CourierError,
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw failure }
            return value
        }
    }
}
