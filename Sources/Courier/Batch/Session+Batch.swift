extension Session {
    /// Runs `batch`: its requests in a task group, at most ``BatchOptions/concurrency`` at a time, results in
    /// input order.
    ///
    /// Throws only ``CourierError/Code/cancelled``, when the batch or the calling task is cancelled; each
    /// request's failure is in its result.
    public nonisolated func run<Value>(_ batch: Batch<Value>) async throws -> BatchOutcome<Value> {
        try await batch.run { try await self.send($0) }
    }

    /// Runs `batch`, handing each result to `consume` in input order as soon as it and every earlier one have ended,
    /// and keeping none once handed on: for batches too large to hold every answer at once (`courier batch` prints a
    /// status line per member this way). At most `window` results wait for an earlier one; the batch takes no new
    /// request while the window is full, so memory stays flat however many requests it holds. Returns the counts.
    ///
    /// ```swift
    /// let batch = Batch(ids.map { Request<User>.get("/users/\($0)") }, options: BatchOptions(concurrency: 16))
    /// let progress = try await session.run(batch) { index, result in
    ///     print(index, (try? result.get())?.status.code ?? 0)
    /// }
    /// ```
    ///
    /// Throws only ``CourierError/Code/cancelled``, when the batch or the calling task is cancelled; each request's
    /// failure is in its result. `consume` runs on one of the batch's workers at a time, never two at once.
    public nonisolated func run<Value>(
        _ batch: Batch<Value>,
        window: Int = 64,
        consume: @escaping @Sendable (_ index: Int, _ result: Result<Response<Value>, CourierError>) async -> Void
    )
        async throws -> BatchProgress
    {
        try await batch.run({ try await self.send($0) }, window: window, deliver: consume)
    }

    /// Runs `requests` as a batch; see ``run(_:)-(Batch<Value>)``.
    public nonisolated func batch<Value>(
        _ requests: [Request<Value>],
        options: BatchOptions = BatchOptions()
    )
        async throws -> BatchOutcome<Value>
    {
        try await run(Batch(requests, options: options))
    }

    /// Runs `body` as a chain of dependent steps; see ``ChainContext``. It runs where the caller runs (on the main
    /// actor from top-level code or a `@MainActor` view model), so `body` may use the caller's state.
    nonisolated(nonsending) public func chain<Value: Sendable>(
        _ body: (ChainContext) async throws -> Value
    ) async throws -> ChainOutcome<Value> {
        let context = ChainContext(session: self)
        do {
            let value = try await body(context)
            return ChainOutcome(value: value, steps: context.steps)
        } catch {
            throw RequestExecutor.normalize(error)
        }
    }
}
