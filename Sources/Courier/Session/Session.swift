#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The entry point: owns the configuration and the transport, and sends requests.
///
/// Prefer ``withSession(_:transport:isolation:_:)``, which always shuts the transport down:
///
/// ```swift
/// try await withSession(Configuration { $0.baseURL = URL(string: "https://api.example.com") }) { session in
///     let user = try await session.send(Request<User>.get("/users/1")).value
/// }
/// ```
///
/// Requests run in parallel: ``send(_:)`` takes a snapshot of the configuration and runs outside the actor, so a
/// slow request never holds up another.
public actor Session {
    /// The configuration, the shut-down flag and the paths resolved before, behind a lock rather than the actor's
    /// executor: every request reads them, and a hop onto the actor per request cost measurable throughput.
    /// Writers still go through the actor, so changes stay ordered.
    private let state: SessionState
    private let transport: any Transport
    /// How bodies read whole are fetched through the transport; worked out once, not per request.
    private let wholeBodyFetch: WholeBodyFetch

    /// Every request of this session in flight: query, cancel, suspend, observe.
    public nonisolated let pool: RequestPool
    /// Stale-while-revalidate refreshes in flight, one per cache key.
    let refreshes = BackgroundWork<CacheKey>()

    /// Creates a session; without a transport it uses ``AsyncHTTPClientTransport``, logging to the configuration's
    /// logger and sending its ``Configuration/hostAddresses`` where they say. Call ``shutdown()`` when done.
    public init(configuration: Configuration = Configuration(), transport: (any Transport)? = nil) {
        self.state = SessionState(configuration)
        let transport = transport ?? AsyncHTTPClientTransport(for: configuration)
        self.transport = transport
        self.wholeBodyFetch = WholeBodyFetch(transport)
        self.pool = RequestPool(scheduling: configuration.scheduling)
    }

    /// The configuration requests start with now.
    public nonisolated var currentConfiguration: Configuration { state.snapshot.configuration }

    /// Changes the configuration for requests sent from now on (a token after login, a new base URL).
    public func updateConfiguration(_ change: @Sendable (inout Configuration) -> Void) {
        pool.apply(state.update(change).scheduling)
    }

    /// Sends `request` and returns its decoded response.
    ///
    /// Throws ``CourierError`` only. Cancelling the calling task cancels the request, also mid-body.
    public nonisolated func send<Value>(_ request: Request<Value>) async throws -> Response<Value> {
        let erased = request.erased
        let (executor, known) = try executor(for: erased)
        return try await executor.run(erased, known: known).unerased()
    }

    /// Shuts the transport down; later requests fail with ``CourierError/Code/sessionClosed``.
    public func shutdown() async throws {
        guard !state.shutDown() else { return }
        await refreshes.shutdown()
        try await transport.shutdown()
    }

    /// An executor for requests sent under the configuration of now, and what `request`'s path resolved to before
    /// under it (``RequestPreparation`` takes it), read in the same lock round trip as the configuration.
    nonisolated func executor(for request: ErasedRequest) throws -> (RequestExecutor, known: ResolvedURL?) {
        let path = request.resolvesAgainstConfiguredBases ? request.path : nil
        let (snapshot, known) = try state.current(resolving: path)
        return (executor(under: snapshot), known)
    }

    /// An executor for requests sent under the configuration of now.
    nonisolated func executor() throws -> RequestExecutor {
        try executor(under: state.current(resolving: nil).snapshot)
    }

    private nonisolated func executor(under snapshot: SessionSnapshot) -> RequestExecutor {
        RequestExecutor(
            snapshot: snapshot,
            state: state,
            transport: transport,
            wholeBodyFetch: wholeBodyFetch,
            pool: pool,
            refreshes: refreshes
        )
    }
}

/// Runs `body` with a new session and shuts the session down afterwards, whether `body` returns or throws.
public func withSession<Result>(
    _ configuration: Configuration = Configuration(),
    transport: (any Transport)? = nil,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (Session) async throws -> Result
) async throws -> Result {
    let session = Session(configuration: configuration, transport: transport)
    let result: Result
    do {
        result = try await body(session)
    } catch {
        try? await session.shutdown()
        throw error
    }
    try await session.shutdown()
    return result
}

// MARK: - What every request reads first

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
    func current(resolving path: String?) throws -> (snapshot: SessionSnapshot, known: ResolvedURL?) {
        let (snapshot, isShutDown, known) = fields.withLock { fields in
            (fields.snapshot, fields.isShutDown, path.flatMap { fields.resolved[$0] })
        }
        guard !isShutDown else { throw CourierError(code: .sessionClosed, message: "the session has been shut down") }
        return (snapshot, known)
    }

    /// Keeps `resolved` for `path`, unless the snapshot it was resolved under has been replaced. Only successes are
    /// kept, and the table is emptied when it fills, which keeps it bounded without bookkeeping.
    func remember(_ resolved: ResolvedURL, for path: String, under snapshot: SessionSnapshot) {
        fields.withLock { fields in
            guard fields.snapshot === snapshot else { return }
            if fields.resolved.count >= Self.capacity { fields.resolved.removeAll(keepingCapacity: true) }
            fields.resolved[path] = resolved
        }
    }
}

/// A URL a request path resolved to against the configured bases, with its facts and how it is sent under that
/// configuration (its TLS policy and its proxy): worked out once per path, not for every request.
struct ResolvedURL: Sendable {
    let url: URL
    let facts: URLFacts
    let tls: TLSPolicy
    let proxy: Proxy?

    /// `url` with what the request path reads of it under `configuration`.
    init(_ url: URL, under configuration: Configuration) {
        self.url = url
        facts = URLFacts(url)
        (tls, proxy) = configuration.route(for: url)
    }
}
