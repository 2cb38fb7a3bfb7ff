import Courier
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSOCKS
import Synchronization

/// A proxy on 127.0.0.1 for tests: an HTTP proxy that opens `CONNECT` tunnels (optionally demanding Basic
/// credentials), or a SOCKS5 proxy. It only tunnels to loopback addresses and counts what it did.
///
/// ```swift
/// try await withTestProxy(.http(credentials: ("user", "secret"))) { proxy in
///     $0.proxies = ProxySettings(all: .http(host: "127.0.0.1", port: proxy.port, credentials: …))
/// }
/// ```
public final class TestProxy: Sendable {
    /// The protocol the proxy speaks.
    public enum Kind: Sendable {
        /// An HTTP proxy; with credentials, a tunnel needs `Proxy-Authorization: Basic …` for them (else 407).
        case http(credentials: (username: String, password: String)?)
        /// A SOCKS5 proxy without authentication.
        case socks5
    }

    /// The port it listens on.
    public let port: Int
    private let server: any Channel
    private let log: ProxyLog

    private init(port: Int, server: any Channel, log: ProxyLog) {
        self.port = port
        self.server = server
        self.log = log
    }

    /// Tunnels opened so far, as `host:port` of their targets.
    public var tunnels: [String] { log.tunnels }
    /// Tunnel requests refused: wrong or missing credentials, a target off loopback, a method other than `CONNECT`.
    public var refusals: Int { log.refusals }

    /// Starts a proxy of `kind` on a free loopback port.
    public static func start(_ kind: Kind) async throws -> TestProxy {
        let log = ProxyLog()
        let expected = Self.expectedAuthorization(kind)
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    switch kind {
                    case .http:
                        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)),
                                                name: "decoder")
                        try pipeline.addHandler(HTTPResponseEncoder(), name: "encoder")
                        try pipeline.addHandler(ConnectTunnel(expectedAuthorization: expected, log: log))
                    case .socks5:
                        try pipeline.addHandler(SOCKSServerHandshakeHandler(), name: "socks")
                        try pipeline.addHandler(SOCKSTunnel(log: log))
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return TestProxy(port: server.localAddress?.port ?? 0, server: server, log: log)
    }

    /// Stops listening; open tunnels end with their peers.
    public func shutdown() async {
        try? await server.close()
    }

    private static func expectedAuthorization(_ kind: Kind) -> String? {
        guard case .http(let credentials?) = kind else { return nil }
        return "Basic " + Data("\(credentials.username):\(credentials.password)".utf8).base64EncodedString()
    }

    /// Whether the proxy may open a tunnel to `host`: loopback only, so a test can never reach further.
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
    }
}

/// Runs `body` with a started proxy and shuts it down afterwards.
public func withTestProxy<Result>(
    _ kind: TestProxy.Kind,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (TestProxy) async throws -> Result
) async throws -> Result {
    let proxy = try await TestProxy.start(kind)
    do {
        let result = try await body(proxy)
        await proxy.shutdown()
        return result
    } catch {
        await proxy.shutdown()
        throw error
    }
}

/// What a proxy did, shared by its connections.
private final class ProxyLog: Sendable {
    private let state = Mutex<(tunnels: [String], refusals: Int)>(([], 0))
    var tunnels: [String] { state.withLock { $0.tunnels } }
    var refusals: Int { state.withLock { $0.refusals } }
    func opened(_ target: String) { state.withLock { $0.tunnels.append(target) } }
    func refused() { state.withLock { $0.refusals += 1 } }
}

/// Joins `channel` and `peer` (on the same event loop) with a pair of glue handlers.
private func join(_ channel: any Channel, _ peer: any Channel) throws {
    let (local, remote) = GlueHandler.matchedPair()
    try channel.pipeline.syncOperations.addHandler(local)
    try peer.pipeline.syncOperations.addHandler(remote)
}

/// Serves one `CONNECT`: checks the credentials and the target, connects, answers 200 and becomes a tunnel.
private final class ConnectTunnel: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let expectedAuthorization: String?
    private let log: ProxyLog
    private var target: (host: String, port: Int)?

    init(expectedAuthorization: String?, log: ProxyLog) {
        self.expectedAuthorization = expectedAuthorization
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            guard head.method == .CONNECT else { return refuse(context, .methodNotAllowed) }
            if let expectedAuthorization, head.headers["proxy-authorization"].first != expectedAuthorization {
                return refuse(context, .proxyAuthenticationRequired, headers: [("Proxy-Authenticate", "Basic realm=\"courier\"")])
            }
            guard let colon = head.uri.lastIndex(of: ":"), let port = Int(head.uri[head.uri.index(after: colon)...]),
                  TestProxy.isLoopback(String(head.uri[..<colon])) else { return refuse(context, .forbidden) }
            target = (String(head.uri[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port)
        case .body: break
        case .end:
            guard let target else { return }
            connect(context, to: target)
        }
    }

    private func connect(_ context: ChannelHandlerContext, to target: (host: String, port: Int)) {
        let channel = context.channel
        let log = self.log
        ClientBootstrap(group: context.eventLoop).connect(host: target.host, port: target.port)
            .assumeIsolated().whenComplete { result in
                switch result {
                case .success(let peer):
                    do {
                        let pipeline = channel.pipeline.syncOperations
                        // The length keeps the encoder from announcing a chunked body the tunnel will not have.
                        let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "0"])
                        pipeline.writeAndFlush(self.wrapOutboundOut(.head(head)), promise: nil)
                        // The glue goes in before the decoder leaves, so bytes the decoder still holds reach the tunnel.
                        _ = pipeline.removeHandler(name: "encoder")
                        _ = pipeline.removeHandler(self)
                        try join(channel, peer)
                        _ = pipeline.removeHandler(name: "decoder")
                        log.opened("\(target.host):\(target.port)")
                    } catch {
                        peer.close(promise: nil)
                        channel.close(promise: nil)
                    }
                case .failure:
                    self.refuse(context, .badGateway)
                }
            }
    }

    private func refuse(_ context: ChannelHandlerContext, _ status: HTTPResponseStatus, headers: [(String, String)] = []) {
        log.refused()
        var head = HTTPResponseHead(version: .http1_1, status: status, headers: HTTPHeaders(headers + [("Content-Length", "0")]))
        head.headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

/// Serves one SOCKS5 connection: no authentication, `CONNECT` to a loopback target, then a tunnel.
private final class SOCKSTunnel: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ClientMessage
    typealias OutboundOut = ServerMessage

    private let log: ProxyLog

    init(log: ProxyLog) {
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .greeting:
            context.writeAndFlush(wrapOutboundOut(.selectedAuthenticationMethod(.init(method: .noneRequired))), promise: nil)
        case .authenticationData: break
        case .request(let request):
            let connecting: EventLoopFuture<any Channel>
            let bootstrap = ClientBootstrap(group: context.eventLoop)
            switch request.addressType {
            case .address(let address) where TestProxy.isLoopback(address.ipAddress ?? ""):
                connecting = bootstrap.connect(to: address)
            case .domain(let host, let port) where TestProxy.isLoopback(host):
                connecting = bootstrap.connect(host: host, port: port)
            default:
                log.refused()
                context.close(promise: nil)
                return
            }
            let channel = context.channel
            let log = self.log
            connecting.assumeIsolated().whenComplete { result in
                guard case .success(let peer) = result, let bound = peer.localAddress else {
                    log.refused()
                    return channel.close(promise: nil)
                }
                do {
                    let pipeline = channel.pipeline.syncOperations
                    pipeline.writeAndFlush(self.wrapOutboundOut(.response(SOCKSResponse(reply: .succeeded, boundAddress: .address(bound)))),
                                           promise: nil)
                    _ = pipeline.removeHandler(self)
                    try join(channel, peer)
                    _ = pipeline.removeHandler(name: "socks")  // after the glue, which receives any bytes it held
                    log.opened(peer.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?")
                } catch {
                    peer.close(promise: nil)
                    channel.close(promise: nil)
                }
            }
        }
    }
}
