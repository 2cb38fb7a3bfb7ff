import Foundation

/// What every request of a session reads before it starts, behind one lock so it costs one round trip: the
/// snapshot of the configuration, whether the session is shut down, and the URL the request's path resolved to
/// before under that snapshot.
final class SessionState: Sendable {
    private struct Fields {
        var snapshot: SessionSnapshot
        var isShutDown = false
        /// Request paths resolved under `snapshot`; emptied when the snapshot changes.
        var resolved: [String: ResolvedURL] = [:]
    }

    private let fields: Locked<Fields>
    /// Enough for the endpoints an app calls; a crawler of unique URLs only pays an emptied table now and then.
    static let capacity = 512

    init(_ configuration: Configuration) {
        fields = Locked(Fields(snapshot: SessionSnapshot(configuration)))
    }

    /// The snapshot requests start with now.
    var snapshot: SessionSnapshot { fields.withLock { $0.snapshot } }

    /// How many paths are kept now.
    var resolvedCount: Int { fields.withLock { $0.resolved.count } }

    /// Changes the configuration for requests that start from now on; returns the new configuration.
    func update(_ change: (inout Configuration) -> Void) -> Configuration {
        fields.withLock { fields in
            var configuration = fields.snapshot.configuration
            change(&configuration)
            fields.snapshot = SessionSnapshot(configuration)
            fields.resolved = [:]
            return configuration
        }
    }

    /// Marks the session shut down; returns whether it was already.
    func shutDown() -> Bool {
        fields.withLock { fields in
            defer { fields.isShutDown = true }
            return fields.isShutDown
        }
    }

    /// The snapshot a request starts with and, when it has a `path` to resolve against the configured bases, what
    /// that path resolved to before; throws ``CourierError/Code/sessionClosed`` once the session is shut down.
    func current(resolving path: String?) throws -> (SessionSnapshot, ResolvedURLs) {
        let (snapshot, isShutDown, known) = fields.withLock { fields in
            (fields.snapshot, fields.isShutDown, path.flatMap { fields.resolved[$0] })
        }
        guard !isShutDown else { throw CourierError(code: .sessionClosed, message: "the session has been shut down") }
        let found = known.flatMap { known in path.map { (path: $0, resolved: known) } }
        return (snapshot, ResolvedURLs(state: self, snapshot: snapshot, known: found))
    }

    /// Keeps `resolved` for `path`, unless the snapshot it was resolved under has been replaced. Only successes are
    /// kept, and the table is emptied when it fills, which keeps it bounded without bookkeeping.
    fileprivate func remember(_ resolved: ResolvedURL, for path: String, under snapshot: SessionSnapshot) {
        fields.withLock { fields in
            guard fields.snapshot === snapshot else { return }
            if fields.resolved.count >= Self.capacity { fields.resolved.removeAll(keepingCapacity: true) }
            fields.resolved[path] = resolved
        }
    }
}

/// A URL a request path resolved to against the configured bases, with its facts.
struct ResolvedURL: Sendable {
    let url: URL
    let facts: URLFacts
}

/// How one executor resolves request paths against the configured bases: the answer the session's state found for
/// the path it was asked about, and, for any other path, the state's table, so a path sent again is not parsed
/// again (parsing and checking an absolute URL was about 1.5 % of a small GET's CPU). Only paths resolved against
/// the configuration's own bases are kept: a request that names its own base, service, CDN or API version
/// resolves anew.
struct ResolvedURLs: Sendable {
    let state: SessionState
    let snapshot: SessionSnapshot
    /// What the state's table held for the path the executor was made for.
    let known: (path: String, resolved: ResolvedURL)?

    /// The URL `path` resolves to under the snapshot with the configured bases, with its facts.
    func resolve(_ path: String) throws -> ResolvedURL {
        if let known, known.path == path { return known.resolved }
        let url = try URLBuilder.resolve(path: path, bases: URLBuilder.Bases(), configuration: snapshot.configuration)
        let resolved = ResolvedURL(url: url, facts: URLFacts(url))
        state.remember(resolved, for: path, under: snapshot)
        return resolved
    }
}
