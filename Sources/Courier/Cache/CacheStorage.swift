/// Where a ``ResponseCache`` keeps entries. Courier ships ``MemoryCacheStore`` and ``DiskCacheStore``; any actor
/// that keeps these promises can stand in for them.
///
/// A store never throws: a read it cannot complete is a miss, a write it cannot complete is logged and dropped,
/// so a broken cache never fails a request.
public protocol CacheStorage: Actor {
    /// The entry stored under `key`, or `nil`.
    func entry(for key: CacheKey) async -> CacheEntry?
    /// Stores `entry` under its key, replacing any entry there, and evicts what the store's limits require.
    func store(_ entry: CacheEntry) async
    /// Removes the entry under `key`; `true` when there was one.
    @discardableResult
    func removeEntry(for key: CacheKey) async -> Bool
    /// Removes the entries `matches` selects; returns how many.
    @discardableResult
    func removeEntries(where matches: @Sendable (CacheEntrySummary) -> Bool) async -> Int
    /// Every entry, without bodies.
    func summaries() async -> [CacheEntrySummary]
    /// Counts and sizes.
    func statistics() async -> CacheStoreStatistics
}

extension CacheStorage {
    /// Removes every entry; returns how many.
    @discardableResult
    public func removeAll() async -> Int {
        await removeEntries { _ in true }
    }
}

/// Counts and sizes of one store.
public struct CacheStoreStatistics: Sendable, Hashable {
    /// How many entries it holds.
    public var entryCount: Int
    /// The bytes its entries take (on disk: files, compressed bodies and headers).
    public var storedBytes: Int
    /// The entries' body bytes before compression.
    public var bodyBytes: Int
    /// The entries' body bytes as stored (after compression, where it paid).
    public var storedBodyBytes: Int
    /// How many entries hold their body uncompressed (too small, already compressed, or compressing poorly).
    public var uncompressedEntries: Int

    /// Creates statistics.
    public init(
        entryCount: Int = 0,
        storedBytes: Int = 0,
        bodyBytes: Int = 0,
        storedBodyBytes: Int = 0,
        uncompressedEntries: Int = 0
    ) {
        self.entryCount = entryCount
        self.storedBytes = storedBytes
        self.bodyBytes = bodyBytes
        self.storedBodyBytes = storedBodyBytes
        self.uncompressedEntries = uncompressedEntries
    }

    /// Body bytes before compression per body byte stored (4.0: bodies take a quarter of their size); 1 when empty.
    public var compressionRatio: Double {
        storedBodyBytes == 0 ? 1 : Double(bodyBytes) / Double(storedBodyBytes)
    }
}
