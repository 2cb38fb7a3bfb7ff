import Foundation

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
    /// logger. Call ``shutdown()`` when done.
    public init(configuration: Configuration = Configuration(), transport: (any Transport)? = nil) {
        self.state = SessionState(configuration)
        let transport = transport ?? AsyncHTTPClientTransport(logger: configuration.logger)
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
        return try await executor(for: erased).run(erased).unerased()
    }

    /// Shuts the transport down; later requests fail with ``CourierError/Code/sessionClosed``.
    public func shutdown() async throws {
        guard !state.shutDown() else { return }
        await refreshes.shutdown()
        try await transport.shutdown()
    }

    /// An executor for requests sent under the configuration of now; given the `request` it is for, it brings
    /// what the request's path resolved to before, read in the same lock round trip as the configuration.
    nonisolated func executor(for request: ErasedRequest? = nil) throws -> RequestExecutor {
        let path = request.flatMap { $0.resolvesAgainstConfiguredBases ? $0.path : nil }
        let (snapshot, resolvedURLs) = try state.current(resolving: path)
        return RequestExecutor(
            snapshot: snapshot,
            resolvedURLs: resolvedURLs,
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
