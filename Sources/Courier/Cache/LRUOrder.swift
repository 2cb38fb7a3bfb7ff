/// Keys from least to most recently used, with constant-time touch, removal and access to the oldest: the
/// eviction order of both cache stores. A value type, so it is tested without any store.
struct LRUOrder<Key: Hashable> {
    private struct Link {
        var older: Key?
        var newer: Key?
    }

    private var links: [Key: Link] = [:]
    /// The least recently used key.
    private(set) var oldest: Key?
    /// The most recently used key.
    private(set) var newest: Key?

    /// How many keys it holds.
    var count: Int { links.count }

    /// Whether `key` is in the order.
    func contains(_ key: Key) -> Bool { links[key] != nil }

    /// Makes `key` the most recently used, adding it when absent.
    mutating func touch(_ key: Key) {
        if newest == key { return }
        remove(key)
        links[key] = Link(older: newest, newer: nil)
        if let newest { links[newest]?.newer = key }
        newest = key
        if oldest == nil { oldest = key }
    }

    /// Removes `key`; nothing happens when it is absent.
    mutating func remove(_ key: Key) {
        guard let link = links.removeValue(forKey: key) else { return }
        if let older = link.older { links[older]?.newer = link.newer } else { oldest = link.newer }
        if let newer = link.newer { links[newer]?.older = link.older } else { newest = link.older }
    }

    /// Keys from oldest to newest.
    var keysOldestFirst: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(links.count)
        var cursor = oldest
        while let key = cursor {
            keys.append(key)
            cursor = links[key]?.newer
        }
        return keys
    }
}
