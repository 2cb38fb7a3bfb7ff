extension Session {
    /// The response cache of the current configuration, if any: statistics, listings, removal.
    public nonisolated var cache: ResponseCache? { currentConfiguration.cache }

    /// The cached answer first (when the cache holds one, whatever its age), then the fresh one from the network,
    /// which is stored: ``CachePolicy/cacheThenNetwork`` as a sequence. A failure of the network ends the sequence
    /// with that error, after the cached answer if there was one. Without a cache it yields the network's answer.
    ///
    /// ```swift
    /// for try await feed in session.responses(for: Request<Feed>.get("/feed")) {
    ///     render(feed.value, stale: feed.isFromCache)
    /// }
    /// ```
    public nonisolated func responses<Value>(
        for request: Request<Value>
    ) -> AsyncThrowingStream<Response<Value>, any Error> {
        let erased = request.cachePolicy(.cacheThenNetwork).erased
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let (executor, known) = try executor(for: erased)
                    try await executor.runCacheThenNetwork(erased, known: known) { continuation.yield($0.unerased()) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: RequestExecutor.normalize(error))
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
