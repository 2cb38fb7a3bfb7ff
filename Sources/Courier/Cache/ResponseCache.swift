public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A session's response cache: a memory store in front of a disk store (either may be absent), the options
/// that key and admit entries, and hit counters. Set it in ``Configuration/cache``; pick what each request may
/// take from it with ``CachePolicy``.
///
/// ```swift
/// let cache = try ResponseCache(disk: DiskCacheStore(directory: cacheDirectory))
/// let session = Session(configuration: Configuration { $0.cache = cache; $0.cachePolicy = .http })
/// print(await cache.statistics().summary)   // "12 entries, 48.1 KiB on disk (3.9x compressed), 30 hits, 12 misses, 2 revalidations"
/// ```
///
/// The stores are actors; the cache itself holds no mutable state but its counters, so it is shared freely.
public final class ResponseCache: Sendable {
    /// The store read first; entries read from the disk are copied here.
    public let memory: (any CacheStorage)?
    /// The store that survives restarts.
    public let disk: (any CacheStorage)?
    /// Keying and admission rules.
    public let options: CacheOptions

    private struct Counters {
        var hits = 0
        var misses = 0
        var revalidations = 0
    }

    private let counters = Locked(Counters())

    /// Creates a cache over the given stores (by default a 32 MiB memory store and no disk store).
    public init(
        memory: (any CacheStorage)? = MemoryCacheStore(),
        disk: (any CacheStorage)? = nil,
        options: CacheOptions = CacheOptions()
    ) {
        self.memory = memory
        self.disk = disk
        self.options = options
    }

    /// Creates a cache whose second store is shared by several processes (`CourierPostgres`'
    /// `PostgresCacheStore`): the same as `disk:`, named for what it is. It is ``disk`` afterwards.
    public convenience init(
        memory: (any CacheStorage)? = MemoryCacheStore(),
        shared: any CacheStorage,
        options: CacheOptions = CacheOptions()
    ) {
        self.init(memory: memory, disk: shared, options: options)
    }

    // MARK: Reading and writing (the session's side)

    /// The entry under `key`: from memory, else from disk (then kept in memory too).
    func lookup(_ key: CacheKey) async -> CacheEntry? {
        if let found = await memory?.entry(for: key) { return found }
        guard let found = await disk?.entry(for: key) else { return nil }
        await memory?.store(found)
        return found
    }

    /// Stores `entry` in every store.
    func store(_ entry: CacheEntry) async {
        await memory?.store(entry)
        await disk?.store(entry)
    }

    func recordHit() { counters.withLock { $0.hits += 1 } }
    func recordMiss() { counters.withLock { $0.misses += 1 } }
    func recordRevalidation() { counters.withLock { $0.revalidations += 1 } }

    // MARK: Management

    /// The key a request for `method` on `url` with `parameters` has in this cache.
    public func key(method: HTTPRequest.Method = .get, url: URL, parameters: Parameters = [:]) -> CacheKey {
        CacheKey(method: method, url: url, parameters: parameters, namespace: options.namespace)
    }

    /// The stored entry for `method` on `url` with `parameters`, without the network and whatever its age.
    public func entry(method: HTTPRequest.Method = .get, url: URL, parameters: Parameters = [:]) async -> CacheEntry? {
        await lookup(key(method: method, url: url, parameters: parameters))
    }

    /// Every entry (without bodies), newest first, the memory store's and the disk store's merged.
    public func entries() async -> [CacheEntrySummary] {
        var byKey: [String: CacheEntrySummary] = [:]
        for summary in await memory?.summaries() ?? [] { byKey[summary.key] = summary }
        for summary in await disk?.summaries() ?? [] { byKey[summary.key] = summary }  // the disk's sizes win
        return byKey.values.sorted { $0.storedAt > $1.storedAt }
    }

    /// The entries for `url`, whatever their query or parameters.
    public func entries(url: URL) async -> [CacheEntrySummary] {
        let base = CacheKey.baseURL(of: CacheKey.normalize(url))
        return await entries().filter { CacheKey.baseURL(of: $0.url) == base }
    }

    /// The stored answers for `url`, whatever their query, method or parameters, as values with their heads and
    /// bodies, newest first: without the network and whatever their age (WYNetwork's read of several caches).
    /// ``entries(url:)`` lists the same entries without reading their bodies.
    public func answers(url: URL) async -> [CacheEntry] {
        var answers: [CacheEntry] = []
        for summary in await entries(url: url) {
            if let entry = await lookup(CacheKey(text: summary.key)) { answers.append(entry) }
        }
        return answers
    }

    /// Removes the entry under `key` from every store; `true` when one held it.
    @discardableResult
    public func remove(_ key: CacheKey) async -> Bool {
        let fromMemory = await memory?.removeEntry(for: key) ?? false
        let fromDisk = await disk?.removeEntry(for: key) ?? false
        return fromMemory || fromDisk
    }

    /// Removes the entry for `method` on `url` with exactly `parameters` (YTKNetwork's per-request cache removal);
    /// `true` when one was stored. Entries of the same URL with other parameters stay.
    @discardableResult
    public func remove(method: HTTPRequest.Method = .get, url: URL, parameters: Parameters = [:]) async -> Bool {
        await remove(key(method: method, url: url, parameters: parameters))
    }

    /// Removes every entry for `url`, whatever its query or parameters; returns how many keys went.
    @discardableResult
    public func removeAll(url: URL) async -> Int {
        let base = CacheKey.baseURL(of: CacheKey.normalize(url))
        return await removeEntries { CacheKey.baseURL(of: $0.url) == base }
    }

    /// Removes every entry for exactly one of `urls` (their queries too), whatever the method, the caller's
    /// credentials or the variant, in one pass over each store; returns how many keys went. What an unsafe request
    /// invalidates.
    @discardableResult
    public func removeAll(exactURLs urls: [URL]) async -> Int {
        let normalized = Set(urls.map(CacheKey.normalize))
        return await removeEntries { normalized.contains($0.url) }
    }

    /// Removes everything; returns how many keys went.
    @discardableResult
    public func removeAll() async -> Int {
        await removeEntries { _ in true }
    }

    /// Empties the memory store only; the disk store keeps its entries.
    public func purgeMemory() async {
        await memory?.removeAll()
    }

    /// Entry counts, sizes and counters.
    public func statistics() async -> CacheStatistics {
        let counts = counters.withLock { $0 }
        return CacheStatistics(
            memory: await memory?.statistics(),
            disk: await disk?.statistics(),
            hits: counts.hits,
            misses: counts.misses,
            revalidations: counts.revalidations
        )
    }

    private func removeEntries(where matches: @escaping @Sendable (CacheEntrySummary) -> Bool) async -> Int {
        let fromMemory = Set(await memory?.summaries().filter(matches).map(\.key) ?? [])
        let fromDisk = Set(await disk?.summaries().filter(matches).map(\.key) ?? [])
        await memory?.removeEntries(where: matches)
        await disk?.removeEntries(where: matches)
        return fromMemory.union(fromDisk).count
    }
}

/// What a ``ResponseCache`` holds and how it has been used since it was created.
public struct CacheStatistics: Sendable, Hashable {
    /// The memory store's counts, when there is one.
    public var memory: CacheStoreStatistics?
    /// The disk store's counts, when there is one.
    public var disk: CacheStoreStatistics?
    /// Requests answered from the cache (304 revalidations included).
    public var hits: Int
    /// Requests the cache could not answer.
    public var misses: Int
    /// Conditional requests that came back 304.
    public var revalidations: Int

    /// Creates statistics.
    public init(memory: CacheStoreStatistics?, disk: CacheStoreStatistics?, hits: Int, misses: Int, revalidations: Int)
    {
        self.memory = memory
        self.disk = disk
        self.hits = hits
        self.misses = misses
        self.revalidations = revalidations
    }

    /// Entries in the store that survives: the disk's count when there is a disk store, else the memory's.
    public var entryCount: Int { (disk ?? memory)?.entryCount ?? 0 }
    /// Bytes the disk store takes.
    public var bytesOnDisk: Int { disk?.storedBytes ?? 0 }
    /// Body bytes before compression, in the store that survives.
    public var bytesBeforeCompression: Int { (disk ?? memory)?.bodyBytes ?? 0 }
    /// Body bytes per byte on disk.
    public var compressionRatio: Double { disk?.compressionRatio ?? 1 }

    /// One line: entries, size on disk, ratio and counters.
    public var summary: String {
        var parts = ["\(entryCount) \(entryCount == 1 ? "entry" : "entries")"]
        if disk != nil {
            parts.append(
                "\(ByteCount.format(bytesOnDisk)) on disk (\(compressionRatio.fixedText(1))x compressed)"
            )
        } else if let memory {
            parts.append("\(ByteCount.format(memory.storedBytes)) in memory")
        }
        parts += ["\(hits) hits", "\(misses) misses", "\(revalidations) revalidations"]
        return parts.joined(separator: ", ")
    }
}
