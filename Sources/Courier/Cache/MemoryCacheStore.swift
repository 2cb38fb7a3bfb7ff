import HTTPTypes

/// Entries in memory, least recently used evicted first once the store passes its byte or count limit.
///
/// ```swift
/// let memory = MemoryCacheStore(maxBytes: 16 << 20, maxCount: 500)
/// ```
public actor MemoryCacheStore: CacheStorage {
    /// The most the entries may cost together, by ``cost``.
    public let maxBytes: Int
    /// The most entries it keeps.
    public let maxCount: Int
    /// What one entry costs against ``maxBytes``; by default its body plus its headers.
    public nonisolated let cost: @Sendable (CacheEntry) -> Int

    private var entries: [CacheKey: (entry: CacheEntry, cost: Int)] = [:]
    private var order = LRUOrder<CacheKey>()
    private var totalCost = 0

    /// Creates an empty store (32 MiB and 1,000 entries by default).
    public init(
        maxBytes: Int = 32 << 20,
        maxCount: Int = 1000,
        cost: @escaping @Sendable (CacheEntry) -> Int = MemoryCacheStore.defaultCost
    ) {
        self.maxBytes = max(0, maxBytes)
        self.maxCount = max(0, maxCount)
        self.cost = cost
    }

    /// The body's size plus the headers' text.
    public static let defaultCost: @Sendable (CacheEntry) -> Int = { entry in
        entry.body.count + entry.key.utf8.count
            + entry.headers.reduce(0) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count + 4 }
    }

    public func entry(for key: CacheKey) -> CacheEntry? {
        guard let stored = entries[key] else { return nil }
        order.touch(key)
        return stored.entry
    }

    public func store(_ entry: CacheEntry) {
        let key = CacheKey(text: entry.key)
        removeEntry(for: key)
        let cost = max(0, cost(entry))
        guard cost <= maxBytes, maxCount > 0 else { return }  // it would evict everything and still not fit
        entries[key] = (entry, cost)
        order.touch(key)
        totalCost += cost
        while totalCost > maxBytes || entries.count > maxCount, let oldest = order.oldest {
            removeEntry(for: oldest)
        }
    }

    @discardableResult
    public func removeEntry(for key: CacheKey) -> Bool {
        guard let removed = entries.removeValue(forKey: key) else { return false }
        order.remove(key)
        totalCost -= removed.cost
        return true
    }

    @discardableResult
    public func removeEntries(where matches: @Sendable (CacheEntrySummary) -> Bool) -> Int {
        let doomed = entries.filter { matches(summary(of: $0.value)) }.keys
        for key in doomed { removeEntry(for: key) }
        return doomed.count
    }

    public func summaries() -> [CacheEntrySummary] {
        entries.values.map(summary(of:))
    }

    public func statistics() -> CacheStoreStatistics {
        let bodyBytes = entries.values.reduce(0) { $0 + $1.entry.body.count }
        return CacheStoreStatistics(
            entryCount: entries.count,
            storedBytes: totalCost,
            bodyBytes: bodyBytes,
            storedBodyBytes: bodyBytes,
            uncompressedEntries: entries.count
        )
    }

    private func summary(of stored: (entry: CacheEntry, cost: Int)) -> CacheEntrySummary {
        var summary = stored.entry.summary
        summary.storedBytes = stored.cost
        return summary
    }
}
