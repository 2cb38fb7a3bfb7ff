/// A store shared by several processes that lets one of them fetch a missing entry while the others wait for it
/// (a fleet-wide single flight). A ``ResponseCache`` whose `disk` store conforms asks it before a request that
/// missed goes to the network; `CourierPostgres`' `PostgresCacheStore` is one.
///
/// In one process, identical requests already share one call when coalescing is on; this coordinates the
/// processes.
public protocol CacheFillCoordinator: Sendable {
    /// Runs `fetch` when this caller is the one to fill `key`, or returns the entry another process stored while
    /// this one waited. The wait ends by `deadline`: then this caller fetches itself, as it does when the
    /// coordination cannot be reached (a store that is down never holds a request back longer than its own
    /// bounded wait). `fetch` stores what it gets before it returns, so the entry is there for the others.
    func fill<Fetched: Sendable>(
        _ key: CacheKey,
        waitingUntil deadline: ContinuousClock.Instant,
        fetch: @Sendable () async throws -> Fetched
    ) async throws -> CacheFill<Fetched>
}

/// How a ``CacheFillCoordinator`` settled a miss.
public enum CacheFill<Fetched: Sendable>: Sendable {
    /// This caller fetched (and `fetch` returned this).
    case fetched(Fetched)
    /// Another process stored this entry while this caller waited.
    case filled(CacheEntry)
}
