public import AsyncHTTPClient
import Atomics
import DequeModule
import HTTPTypes
public import Logging
public import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The default transport: AsyncHTTPClient, with its connection pool, HTTP/1.1 and HTTP/2.
///
/// Every exchange goes through AsyncHTTPClient's delegate API. ``send(_:)`` streams the body with backpressure,
/// bounded by AsyncHTTPClient's deadline; a session reading a response whole collects it in the delegate instead
/// (see <doc:TheRequestPath>), bounded by the session's request pool. AsyncHTTPClient fixes connect and read
/// timeouts per client, so this transport keeps clients per distinct pair a request asks for (almost always just
/// the session's own).
///
/// **Lanes.** The transport keeps one client per event loop (a lane), each with its connections on its own loop,
/// and its delegate calls run there too, so no call hops between loops. AsyncHTTPClient's delegate API runs the
/// delegate on a loop chosen before the connection is: with one client over both loops, about every other request
/// leased a connection on the other loop and paid a hop per delegate call; requiring the loop instead
/// (`.delegateAndChannel(on:)`) makes AsyncHTTPClient 1.37 open an event-loop-bound connection and close it as
/// soon as it idles. Requests that can only use HTTP/1.1 (plain `http`, or ``HTTPVersionPolicy/http1Only``) take
/// the lanes in turn, and the configured connection limit per host is divided between the lanes, so the host sees
/// as many connections as with one client. A request that may use HTTP/2 keeps to its host's lane, so the host's
/// requests share one HTTP/2 connection; that lane gets the whole limit.
public final class AsyncHTTPClientTransport: Transport {
    private struct ClientKey: Hashable {
        var connect: Duration
        var readIdle: Duration
        var proxy: Proxy?
        var httpVersion: HTTPVersionPolicy
        /// Which event loop's client: the index in ``lanes``.
        var lane: Int
        /// Whether the lanes share the connection limit (HTTP/1.1) or this lane has all of it.
        var sharesLimit: Bool
        /// The host name every connection's certificate must name, checked by Courier (``ServerIdentity``): set
        /// for `https` to a host the configuration maps to an address, whose connections are this client's alone.
        var checkedName: String? = nil
    }

    private let baseConfiguration: HTTPClient.Configuration
    private let clients: Locked<ClientTable<ClientKey, HTTPClient>>
    /// Each lane's first client, read without the table's lock: a session nearly always uses one key per lane.
    private let firstClients: [ManagedAtomicLazyReference<KeyedClient>]
    /// The caller's own client, which every request goes through and which this transport never shuts down.
    private let providedClient: HTTPClient?
    private let isShutDown = Atomic<Bool>(false)
    private let routing: ConnectionRouting
    private let lanes: Lanes

    /// Creates a transport whose clients it makes, owns and shuts down, with their connections on the loops of
    /// `eventLoopGroup` (`nil`: NIO's shared `MultiThreadedEventLoopGroup.singleton`); a group you pass stays
    /// yours: ``shutdown()`` never shuts it down. `configuration` is prepared as ``preparedConfiguration(_:)``
    /// says. `logger` receives TLS warnings: hosts reached without certificate verification, and pin mismatches.
    public convenience init(
        configuration: HTTPClient.Configuration = HTTPClient.Configuration(),
        eventLoopGroup: (any EventLoopGroup)? = nil,
        logger: Logger = Logger(label: "courier")
    ) {
        self.init(configuration: configuration, eventLoopGroup: eventLoopGroup, logger: logger, metrics: nil)
    }

    /// The transport ``init(configuration:eventLoopGroup:logger:)`` makes, whose connections count in `metrics`
    /// (`http.client.open_connections`, `http.client.connection.duration`) when there are any.
    init(
        configuration: HTTPClient.Configuration,
        eventLoopGroup: (any EventLoopGroup)?,
        logger: Logger,
        metrics: CourierMetrics?
    ) {
        self.baseConfiguration = Self.preparedConfiguration(configuration, metrics: metrics)
        self.routing = ConnectionRouting(logger: logger, hostAddresses: configuration.dnsOverride)
        self.providedClient = nil
        self.lanes = Lanes(eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton)
        clients = Locked(ClientTable(frontLimit: 2 * lanes.count))  // a plain and an HTTP/2 key per lane
        firstClients = (0..<lanes.count).map { _ in ManagedAtomicLazyReference() }
    }

    /// The transport a session makes for itself from its `configuration`: AsyncHTTPClient's defaults, the
    /// configuration's host addresses as its `dnsOverride`, TLS warnings to the configuration's logger.
    convenience init(for configuration: Configuration) {
        var client = HTTPClient.Configuration()
        client.dnsOverride = configuration.hostAddresses
        self.init(
            configuration: client,
            eventLoopGroup: nil,
            logger: configuration.logger,
            metrics: CourierMetrics(factory: configuration.metricsFactory)
        )
    }

    /// Creates a transport that sends every request through your `client` (`HTTPClient.shared`, or one your
    /// server made) and never shuts it down: ``shutdown()`` leaves it as it found it.
    ///
    /// The client's own settings then apply where the session would otherwise pick a client per request: its
    /// connect and read timeouts (the session's deadline per call still holds), its proxy and its HTTP versions.
    /// Make it from ``preparedConfiguration(_:)``: a client that follows redirects or decompresses bodies itself
    /// would do what the session does a second time, and only a prepared client keeps a response with a status
    /// code AsyncHTTPClient would trap on away from it.
    public init(client: HTTPClient, logger: Logger = Logger(label: "courier")) {
        self.baseConfiguration = Self.preparedConfiguration(HTTPClient.Configuration())
        self.routing = ConnectionRouting(logger: logger)
        self.providedClient = client
        self.lanes = Lanes(client.eventLoopGroup)
        clients = Locked(ClientTable(frontLimit: 1))
        firstClients = []
    }

    /// Sends the request; see ``Transport/send(_:cancellation:)``.
    public func send(_ request: PreparedRequest, cancellation: TransportCancellation) async throws -> TransportResponse
    {
        try await send(request, cancellation: cancellation, holdingBody: false)
    }

    func send(
        _ request: PreparedRequest,
        cancellation: TransportCancellation,
        holdingBody: Bool
    ) async throws -> TransportResponse {
        try await exchange(request) { client, bodiless, _ in
            var outgoing = bodiless
            outgoing.body = Self.body(request.body, idle: request.timeouts.readIdle)
            let deadline = NIODeadline.now() + TimeAmount(Tick.now.duration(to: request.deadlineTick))
            let stream = ResponseStream(
                timeouts: request.timeouts,
                url: request.url,
                proxy: request.proxy,
                holdsBody: holdingBody
            )
            // Until the body has been read: the head's wait and the body's both end when the stream is cancelled.
            cancellation.onCancel { stream.cancel() }
            await withCheckedContinuation { continuation in
                stream.awaitHead(continuation)
                // A lane's client has one loop, so `.indifferent` is that loop: the delegate runs where the
                // connection does, as for a body read whole.
                stream.attach(
                    client.execute(request: outgoing, delegate: stream, eventLoop: .indifferent, deadline: deadline)
                )
            }
            return try stream.takeHead()
        }
    }

    /// Routes `request`, picks its client, and runs `send` with them and AsyncHTTPClient's form of the request (its
    /// body for `send` to set), and whether a request read whole starts from its lane's loop, which saves a hop
    /// (not when it may go over HTTP/2, whose one connection's loop carries every stream to the host and is busy
    /// enough); translates what `send` throws, and reports a relay's own reason for giving up when it has one.
    /// Inlined, so `send` runs in its caller's frame instead of two frames of their own.
    @inline(__always)
    nonisolated(nonsending) func exchange<Answer>(
        _ request: PreparedRequest,
        _ send: nonisolated(nonsending) (HTTPClient, HTTPClient.Request, _ startsFromLoop: Bool) async throws -> Answer
    )
        async throws -> Answer
    {
        // NIO traps on a port past 65535: whatever built this request, no such port reaches it.
        if let problem = request.urlFacts.portProblem {
            throw CourierError.invalidURL(request.url.absoluteString, reason: problem)
        }
        let route =
            if let plain = ConnectionRouting.plainRoute(for: request) { plain } else {
                try await routing.route(for: request)
            }
        let proxy: Proxy? = if case .relayed = route { nil } else { request.proxy }  // a relay makes its own way
        let lane = lanes.take(for: request)
        let client =
            try providedClient.map(checkOpen)
            ?? client(
                for: ClientKey(
                    connect: request.timeouts.connect,
                    readIdle: request.timeouts.readIdle,
                    proxy: proxy,
                    httpVersion: request.httpVersion,
                    lane: lane.index,
                    sharesLimit: lane.sharesLimit,
                    checkedName: route.isDirect
                        ? Self.checkedName(for: request, hostAddresses: baseConfiguration.dnsOverride) : nil
                )
            )
        do {
            return try await send(client, try Self.clientRequest(request, route: route), !lane.mayMultiplex)
        } catch {
            // A relay that gave up on the server (a pin mismatch, a failed handshake, a proxy's refusal) knows why.
            if case .relayed(let relay) = route, let failure = relay.takeFailure() { throw failure }
            throw Self.translate(error, timeouts: request.timeouts, url: request.url, proxy: request.proxy)
        }
    }

    /// The host name Courier checks the certificates of `request`'s connections against: its host, when `https`
    /// goes to an address `hostAddresses` maps it to and the policy verifies names. SwiftNIO SSL would accept a
    /// certificate for the address instead (``ServerIdentity``).
    private static func checkedName(for request: PreparedRequest, hostAddresses: [String: String]) -> String? {
        guard !hostAddresses.isEmpty, request.isHTTPS, request.tls.validatesDomainName,
            !request.tls.allowsInvalidCertificates,
            let host = request.url.host(percentEncoded: false), hostAddresses[host] != nil, !host.isIPAddress
        else { return nil }
        return host
    }

    /// AsyncHTTPClient's form of a proxy.
    private static func proxy(_ proxy: Proxy) -> HTTPClient.Configuration.Proxy {
        switch proxy.kind {
        case .http:
            .server(
                host: proxy.host,
                port: proxy.port,
                authorization: proxy.credentials.map { .basic(username: $0.username, password: $0.password) }
            )
        // with credentials, ConnectionRelay goes instead
        case .socks5: .socksServer(host: proxy.host, port: proxy.port)
        }
    }

    /// Where and what AsyncHTTPClient sends for `request` along `route`.
    private static func clientRequest(
        _ request: PreparedRequest,
        route: ConnectionRouting.Route
    ) throws -> HTTPClient.Request {
        var headers = HTTPHeaders()
        headers.reserveCapacity(request.headers.count)
        for field in request.headers { headers.add(name: field.name.rawName, value: field.value) }
        var url = request.url
        var tlsConfiguration: TLSConfiguration?
        switch route {
        case .direct(let configuration): tlsConfiguration = configuration
        case .relayed(let relay):
            let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
            let socket = PercentEncoding.encode(relay.socketPath, keeping: PercentEncoding.isAlphanumeric)
            let path = components?.percentEncodedPath ?? ""
            let relayed =
                "http+unix://\(socket)\(path.isEmpty ? "/" : path)"
                + (components?.percentEncodedQuery.map { "?" + $0 } ?? "")
            guard let relayedURL = URL(string: relayed) else { throw HTTPClientError.invalidURL }
            url = relayedURL
            if !headers.contains(name: "host"), let host = components?.percentEncodedHost {
                let shownHost = host.contains(":") ? "[\(host)]" : host
                headers.add(name: "host", value: request.url.port.map { "\(shownHost):\($0)" } ?? shownHost)
            }
        }
        // Given the parsed URL, so AsyncHTTPClient does not parse it again.
        return try HTTPClient.Request(
            url: url,
            method: HTTPMethod(rawValue: request.method.rawValue),
            headers: headers,
            tlsConfiguration: tlsConfiguration
        )
    }

    /// The response to hand on for an AsyncHTTPClient head and its body, with the body's errors translated.
    static func response<Body: AsyncSequence & Sendable>(
        _ status: HTTPResponseStatus,
        _ headers: HTTPHeaders,
        body: Body,
        timeouts: Timeouts,
        url: URL,
        version: HTTPVersion? = nil
    ) -> TransportResponse where Body.Element == ByteBuffer {
        var response = TransportResponse(
            status: Self.status(status),
            headers: ResponseFields.fields(headers),
            body: ByteStream(TranslatingBody(base: body, timeouts: timeouts, url: url))
        )
        response.version = version?.text
        return response
    }

    /// An AsyncHTTPClient status in HTTP types' terms.
    static func status(_ status: HTTPResponseStatus) -> HTTPResponse.Status {
        HTTPResponse.Status(code: Int(status.code), reasonPhrase: status.reasonPhrase)
    }

    /// Shuts down every client this transport made (never one handed to ``init(client:logger:)``, nor an event
    /// loop group); see ``Transport/shutdown()``.
    public func shutdown() async throws {
        guard !isShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let all = clients.withLock { clients in
            defer { clients.removeAll() }
            return clients.all
        }
        var failure: (any Error)?
        do { try await Self.shutDownEach(all) { try await $0.shutdown() } } catch { failure = error }
        await routing.shutdown()  // the relays go too, whatever a client did
        if let failure { throw failure }
    }

    /// Runs `shutdown` for every one of `items`, even after one throws, then throws the first error: one client
    /// that fails must not leave the others' connections and threads behind.
    static func shutDownEach<Item>(_ items: [Item], _ shutdown: (Item) async throws -> Void) async throws {
        var firstError: (any Error)?
        for item in items {
            do { try await shutdown(item) } catch { firstError = firstError ?? error }
        }
        if let firstError { throw firstError }
    }

    /// The client for `key`: the lane's first client when `key` is its key, without a lock, else from the table
    /// (made the first time), which becomes the lane's first when it has none.
    private func client(for key: ClientKey) throws -> HTTPClient {
        let first = firstClients[key.lane]
        if let known = first.load(), known.key == key { return try checkOpen(known.client) }
        let client = try clients.withLock { clients in
            try clients.client(for: key) { try makeClient(for: key) }
        }
        _ = first.storeIfNilThenLoad(KeyedClient(key: key, client: client))
        return client
    }

    /// A client with the key it was made for.
    private final class KeyedClient: Sendable {
        let key: ClientKey
        let client: HTTPClient

        init(key: ClientKey, client: HTTPClient) {
            self.key = key
            self.client = client
        }
    }

    /// `client`, unless this transport has been shut down.
    private func checkOpen(_ client: HTTPClient) throws -> HTTPClient {
        guard !isShutDown.load(ordering: .acquiring) else {
            throw CourierError(code: .sessionClosed, message: "the transport has been shut down")
        }
        return client
    }

    /// A new client for `key`; called under the table's lock, so each key gets one.
    private func makeClient(for key: ClientKey) throws -> HTTPClient {
        guard !isShutDown.load(ordering: .acquiring) else {
            throw CourierError(code: .sessionClosed, message: "the transport has been shut down")
        }
        var configuration = baseConfiguration
        configuration.timeout = .init(connect: TimeAmount(key.connect), read: TimeAmount(key.readIdle))
        configuration.proxy = key.proxy.map(Self.proxy)
        configuration.httpVersion = key.httpVersion == .http1Only ? .http1Only : .automatic
        if key.sharesLimit {
            let limit = configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(1, limit / lanes.count)
        }
        if let name = key.checkedName {
            // Before the connection takes a request: a failure here fails the requests waiting for it.
            configuration = ConnectionInitializers.installingOnEveryConnection(
                { channel in try ServerIdentity.check(channel.pipeline.syncOperations, names: name) },
                on: configuration
            )
        }
        return HTTPClient(eventLoopGroup: lanes.loop(key.lane), configuration: configuration)
    }

    /// The request body in AsyncHTTPClient's terms; files and streams are written chunk by chunk as the
    /// connection accepts them. Up to ``pendingWrites`` writes are in flight, so reading the next chunk
    /// overlaps with sending the last ones instead of waiting for each; that bounds the memory to that many chunks.
    /// While `suspension` holds the request, no further chunk is read or sent.
    static let pendingWrites = 4

    /// Bytes in memory up to this size are handed to AsyncHTTPClient whole; larger ones are written chunk by chunk
    /// like a file, so that a server that stops reading them is noticed (``BodyWriteWait``).
    static let wholeBodyBytes = 256 << 10

    /// Whether `body` is written chunk by chunk, and so may still be going out when the server answers.
    static func writesInChunks(_ body: PreparedBody) -> Bool {
        switch body {
        case .empty: false
        case .bytes(let data): data.count > wholeBodyBytes
        case .file, .stream: true
        }
    }

    /// With `earlyAnswer`, the writing stops as soon as the server has answered with a status of 300 or more
    /// (``EarlyAnswer``). A connection that takes the body slower than 64 KiB per `idle` ends the request with
    /// ``StalledBodyWrite`` (``BodyWriteWait``).
    static func body(
        _ body: PreparedBody,
        idle: Duration,
        suspension: Call? = nil,
        earlyAnswer: EarlyAnswer? = nil
    ) -> HTTPClient.Body? {
        switch body {
        case .empty: return nil
        case .bytes(let data) where !writesInChunks(body): return .bytes(data)
        case .bytes, .file, .stream:
            let chunks = body.chunks()
            return .stream(contentLength: body.length) { writer in
                let promise = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
                promise.completeWithTask {
                    var pending = Deque<(write: EventLoopFuture<Void>, bytes: Int)>()
                    func wait(for write: (write: EventLoopFuture<Void>, bytes: Int)) async throws -> Bool {
                        try await BodyWriteWait.wait(
                            for: write.write,
                            bytes: write.bytes,
                            earlyAnswer: earlyAnswer,
                            idle: idle
                        )
                    }
                    for try await chunk in chunks {
                        await suspension?.waitWhileSuspended()
                        if earlyAnswer?.isAnswered == true { return }
                        pending.append((writer.write(.byteBuffer(chunk)), chunk.readableBytes))
                        if pending.count >= pendingWrites, let oldest = pending.popFirst() {
                            guard try await wait(for: oldest) else { return }
                        }
                    }
                    for write in pending { guard try await wait(for: write) else { return } }
                }
                return promise.futureResult
            }
        }
    }
}
