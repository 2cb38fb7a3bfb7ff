import Courier
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A real HTTP/1.1 server on 127.0.0.1 for tests and demos, with routes that echo, redirect, compress, serve
/// ranges, drip and inject faults (see ``TestServer`` routes in the docs). Every integration test uses it.
///
/// ```swift
/// import Testing
///
/// try await withTestServer { server in
///     let url = server.url("/status/503")
///     …
///     #expect(server.hits("/status/503") == 1)
/// }
/// ```
public final class TestServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    /// `http://127.0.0.1:PORT`.
    public let baseURL: URL

    let state: ServerState
    private let serverTask: Task<Void, Never>
    private let closeServer: @Sendable () -> Void

    private init(
        port: Int,
        isTLS: Bool,
        state: ServerState,
        task: Task<Void, Never>,
        close: @escaping @Sendable () -> Void
    ) {
        self.port = port
        // The literals are well-formed URLs for any port number, so this cannot fail.
        self.baseURL = URL(string: isTLS ? "https://localhost:\(port)" : "http://127.0.0.1:\(port)")!
        self.state = state
        self.serverTask = task
        self.closeServer = close
    }

    /// Starts a server on `host` (loopback only) and `port` (0 picks a free one); with `tls` it speaks HTTPS and
    /// its ``baseURL`` is `https://localhost:PORT`, so the certificate can name the host.
    public static func start(
        host: String = "127.0.0.1",
        port: Int = 0,
        tls: TLSOptions? = nil
    ) async throws -> TestServer {
        if let tls, tls.http2 { return try await startNegotiatingHTTP2(host: host, port: port, tls: tls) }
        let state = ServerState()
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0.serverConfiguration()) }
        let server = try await bootstrap.bind(host: host, port: port) { channel in
            channel.eventLoop.makeCompletedFuture {
                if let sslContext {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                }
                let connection = try http1Connection(on: channel)
                state.accept(connection)
                return connection
            }
        }
        return running(server, state: state, isTLS: tls != nil) { connection in
            await ConnectionHandler(state: state).run(connection)
        }
    }

    /// The listening options every test server uses.
    static var bootstrap: ServerBootstrap {
        ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 512)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
    }

    /// An HTTP/1.1 connection on `channel`: requests decoded, answers written as raw bytes. Call on its event loop.
    static func http1Connection(on channel: any Channel) throws -> NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer> {
        try channel.pipeline.syncOperations.addHandler(
            ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes))
        )
        return try NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>(wrappingChannelSynchronously: channel)
    }

    /// A server that hands each accepted connection to `serve`, concurrently, until it is shut down.
    static func running<Connection: Sendable>(
        _ server: NIOAsyncChannel<Connection, Never>,
        state: ServerState,
        isTLS: Bool,
        serve: @escaping @Sendable (Connection) async -> Void
    ) -> TestServer {
        let listener = server.channel
        let task = Task<Void, Never> {
            _ = try? await server.executeThenClose { connections in
                await withDiscardingTaskGroup { group in
                    do {
                        for try await connection in connections {
                            group.addTask { await serve(connection) }
                        }
                    } catch {}
                    group.cancelAll()
                }
            }
        }
        return TestServer(
            port: listener.localAddress?.port ?? 0,
            isTLS: isTLS,
            state: state,
            task: task,
            close: { listener.close(promise: nil) }
        )
    }

    /// The absolute URL of `path` (which may carry a query) on this server.
    public func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + (path.hasPrefix("/") ? path : "/" + path)) ?? baseURL
    }

    /// How many requests reached `path` (without its query) since the server started.
    public func hits(_ path: String) -> Int { state.hits(path) }

    /// The requests for `path` (without its query) this server answered, oldest first, as their heads arrived:
    /// a test checks from the server's side what a client sent. The last 1,000 requests are kept.
    public func requests(_ path: String) -> [SeenRequest] { state.requests(path) }

    /// Requests received in all.
    public var totalHits: Int { state.totalHits }

    /// How many requests to `path` the client gave up on: it closed the connection while `/delay` was waiting.
    public func aborts(_ path: String) -> Int { state.aborts(path) }

    /// A named counter of the routes: `file-bytes:KEY` is the number of body bytes `/file` sent for KEY, `file:KEY`
    /// the number of requests it answered.
    public func counter(_ name: String) -> Int { state.counter(name) }

    /// Stops listening and ends every open connection, stalled ones included.
    public func shutdown() async {
        state.closeUnserved()
        closeServer()
        serverTask.cancel()
        await serverTask.value
    }
}

/// Runs `body` with a started server (speaking HTTPS with `tls`) and shuts it down afterwards.
public func withTestServer<Result>(
    tls: TestServer.TLSOptions? = nil,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (TestServer) async throws -> Result
) async throws -> Result {
    let server = try await TestServer.start(tls: tls)
    do {
        let result = try await body(server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}

/// Counters and per-key state shared by every connection of one server.
final class ServerState: Sendable {
    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>

    private let counters = Locked<[String: Int]>([:])
    /// The heads of the last ``SeenRequest/kept`` requests, oldest first.
    private let seen = Locked<[SeenRequest]>([])

    /// Keeps the head of a request the server answered.
    func record(_ request: SeenRequest) {
        seen.withLock { seen in
            if seen.count == SeenRequest.kept { seen.removeFirst() }
            seen.append(request)
        }
    }

    /// The heads kept for `path`, oldest first.
    func requests(_ path: String) -> [SeenRequest] { seen.withLock { $0.filter { $0.path == path } } }
    /// Connections accepted but not yet served. NIO traps when a connection's writer is dropped unfinished,
    /// which happens to a connection accepted while the server shuts down; these are finished and closed instead.
    private let unserved = Locked<(connections: [ObjectIdentifier: Connection], isClosed: Bool)>(([:], false))

    /// Keeps a just-accepted connection until it is served, or finishes it at once when the server is closing.
    func accept(_ connection: Connection) {
        let closing = unserved.withLock { unserved in
            if !unserved.isClosed { unserved.connections[ObjectIdentifier(connection.channel)] = connection }
            return unserved.isClosed
        }
        if closing { Self.discard(connection) }
    }

    /// The connection is being served; its handler finishes it.
    func serving(_ connection: Connection) {
        _ = unserved.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(connection.channel)) }
    }

    /// Finishes and closes every connection nobody will serve.
    func closeUnserved() {
        let connections = unserved.withLock { unserved in
            unserved.isClosed = true
            defer { unserved.connections = [:] }
            return Array(unserved.connections.values)
        }
        for connection in connections { Self.discard(connection) }
    }

    private static func discard(_ connection: Connection) {
        Task { try? await connection.executeThenClose { _, _ in } }  // finishes the writer, closes the channel
    }

    /// Counts a hit on `path` and returns the new count.
    @discardableResult
    func recordHit(_ path: String) -> Int {
        counters.withLock { counters in
            counters[path, default: 0] += 1
            counters["*", default: 0] += 1
            return counters[path, default: 0]
        }
    }

    /// Increments and returns a named counter (for `/flaky/KEY`).
    func increment(_ key: String) -> Int {
        counters.withLock { counters in
            counters["#" + key, default: 0] += 1
            return counters["#" + key, default: 0]
        }
    }

    /// Adds `amount` to a named counter.
    func add(_ key: String, _ amount: Int) {
        counters.withLock { $0["#" + key, default: 0] += amount }
    }

    /// The value of a named counter, without changing it.
    func counter(_ key: String) -> Int { counters.withLock { $0["#" + key] ?? 0 } }

    /// Counts a request whose client closed the connection before the answer.
    func recordAbort(_ path: String) {
        counters.withLock { $0["!" + path, default: 0] += 1 }
    }

    func aborts(_ path: String) -> Int { counters.withLock { $0["!" + path] ?? 0 } }
    func hits(_ path: String) -> Int { counters.withLock { $0[path] ?? 0 } }
    var totalHits: Int { counters.withLock { $0["*"] ?? 0 } }
}
