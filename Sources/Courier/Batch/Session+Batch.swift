extension Session {
    /// Runs `batch`: its requests in a task group, at most ``BatchOptions/concurrency`` at a time, results in
    /// input order.
    ///
    /// Throws only ``CourierError/Code/cancelled``, when the batch or the calling task is cancelled; each
    /// request's failure is in its result.
    public nonisolated func run<Value>(_ batch: Batch<Value>) async throws -> BatchOutcome<Value> {
        try await batch.run { try await self.send($0) }
    }

    /// Runs `requests` as a batch; see ``run(_:)-(Batch<Value>)``.
    public nonisolated func batch<Value>(_ requests: [Request<Value>], options: BatchOptions = BatchOptions())
        async throws -> BatchOutcome<Value>
    {
        try await run(Batch(requests, options: options))
    }

    /// Runs `body` as a chain of dependent steps; see ``ChainContext``.
    public nonisolated func chain<Value: Sendable>(_ body: (ChainContext) async throws -> Value) async throws -> ChainOutcome<Value> {
        let context = ChainContext(session: self)
        do {
            let value = try await body(context)
            return ChainOutcome(value: value, steps: context.steps)
        } catch {
            throw RequestExecutor.normalize(error)
        }
    }
}
