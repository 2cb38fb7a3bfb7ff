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
/// Requests run in parallel: ``send(_:)`` reads a snapshot of the configuration from the actor, then runs
/// outside it, so a slow request never holds up another.
public actor Session {
    private var configuration: Configuration
    private let transport: any Transport
    private var isShutDown = false

    /// Creates a session; without a transport it uses ``AsyncHTTPClientTransport``. Call ``shutdown()`` when done.
    public init(configuration: Configuration = Configuration(), transport: (any Transport)? = nil) {
        self.configuration = configuration
        self.transport = transport ?? AsyncHTTPClientTransport()
    }

    /// The configuration requests start with now.
    public var currentConfiguration: Configuration { configuration }

    /// Changes the configuration for requests sent from now on (a token after login, a new base URL).
    public func updateConfiguration(_ change: @Sendable (inout Configuration) -> Void) {
        change(&configuration)
    }

    /// Sends `request` and returns its decoded response.
    ///
    /// Throws ``CourierError`` only. Cancelling the calling task cancels the request, also mid-body.
    public nonisolated func send<Value>(_ request: Request<Value>) async throws -> Response<Value> {
        try await executor().run(request)
    }

    /// Shuts the transport down; later requests fail with ``CourierError/Code/sessionClosed``.
    public func shutdown() async throws {
        guard !isShutDown else { return }
        isShutDown = true
        try await transport.shutdown()
    }

    private func executor() throws -> RequestExecutor {
        guard !isShutDown else { throw CourierError(code: .sessionClosed, message: "the session has been shut down") }
        return RequestExecutor(configuration: configuration, transport: transport)
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
