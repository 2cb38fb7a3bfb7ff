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
    /// The configuration and the shut-down flag, behind a lock rather than the actor's executor: every request
    /// reads them, and a hop onto the actor per request cost measurable throughput. Writers still go through
    /// the actor, so changes stay ordered.
    private let state: Locked<(snapshot: SessionSnapshot, isShutDown: Bool)>
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
        self.state = Locked((SessionSnapshot(configuration), false))
        let transport = transport ?? AsyncHTTPClientTransport(logger: configuration.logger)
        self.transport = transport
        self.wholeBodyFetch = WholeBodyFetch(transport)
        self.pool = RequestPool(scheduling: configuration.scheduling)
    }

    /// The configuration requests start with now.
    public nonisolated var currentConfiguration: Configuration { state.withLock { $0.snapshot.configuration } }

    /// Changes the configuration for requests sent from now on (a token after login, a new base URL).
    public func updateConfiguration(_ change: @Sendable (inout Configuration) -> Void) {
        let scheduling = state.withLock { state in
            var configuration = state.snapshot.configuration
            change(&configuration)
            state.snapshot = SessionSnapshot(configuration)
            return configuration.scheduling
        }
        pool.apply(scheduling)
    }

    /// Sends `request` and returns its decoded response.
    ///
    /// Throws ``CourierError`` only. Cancelling the calling task cancels the request, also mid-body.
    public nonisolated func send<Value>(_ request: Request<Value>) async throws -> Response<Value> {
        try await executor().run(request.erased).unerased()
    }

    /// Shuts the transport down; later requests fail with ``CourierError/Code/sessionClosed``.
    public func shutdown() async throws {
        let wasShutDown = state.withLock { state in
            defer { state.isShutDown = true }
            return state.isShutDown
        }
        guard !wasShutDown else { return }
        await refreshes.shutdown()
        try await transport.shutdown()
    }

    nonisolated func executor() throws -> RequestExecutor {
        let (snapshot, isShutDown) = state.withLock { ($0.snapshot, $0.isShutDown) }
        guard !isShutDown else { throw CourierError(code: .sessionClosed, message: "the session has been shut down") }
        return RequestExecutor(
            snapshot: snapshot,
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
