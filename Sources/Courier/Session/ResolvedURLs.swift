import Foundation

/// The URLs that request paths resolved to under one configuration, so a path sent again is not parsed again:
/// parsing and checking an absolute URL was about 1.5 % of a small GET's CPU. Only paths resolved against the
/// configuration's own bases are kept (a request that names its own base, service, CDN or API version resolves
/// anew), and only successes; the table is emptied when it fills, which keeps it bounded without bookkeeping.
final class ResolvedURLs: Sendable {
    private let table = Locked<[String: (url: URL, facts: URLFacts)]>([:])
    /// Enough for the endpoints an app calls; a crawler of unique URLs only pays a cleared table now and then.
    static let capacity = 512

    /// How many paths are kept now.
    var count: Int { table.withLock { $0.count } }

    /// The URL `path` resolves to under `configuration` with the default bases, with its facts.
    func resolve(_ path: String, configuration: Configuration) throws -> (url: URL, facts: URLFacts) {
        if let known = table.withLock({ $0[path] }) { return known }
        let url = try URLBuilder.resolve(path: path, bases: URLBuilder.Bases(), configuration: configuration)
        let resolved = (url: url, facts: URLFacts(url))
        table.withLock { table in
            if table.count >= Self.capacity { table.removeAll(keepingCapacity: true) }
            table[path] = resolved
        }
        return resolved
    }
}
