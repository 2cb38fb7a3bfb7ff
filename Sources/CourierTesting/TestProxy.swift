import Courier
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A proxy on 127.0.0.1 for tests: an HTTP proxy that opens `CONNECT` tunnels, or a SOCKS5 proxy, each
/// optionally demanding credentials. It only tunnels to loopback addresses and counts what it did.
///
/// ```swift
/// try await withTestProxy(.http(credentials: ("user", "secret"))) { proxy in
///     let config = Configuration {
///         $0.proxies = ProxySettings(all: .http(host: "127.0.0.1", port: proxy.port,
///                                               credentials: .init(username: "user", password: "secret")))
///     }
///     …   // requests through `config`; `proxy.tunnels` lists the tunnels it opened
/// }
/// ```
public final class TestProxy: Sendable {
    /// The protocol the proxy speaks.
    public enum Kind: Sendable {
        /// An HTTP proxy; with credentials, a tunnel needs `Proxy-Authorization: Basic …` for them (else 407).
        case http(credentials: (username: String, password: String)?)
        /// A SOCKS5 proxy; with credentials, it demands username/password authentication (RFC 1929) for them.
        case socks5(credentials: (username: String, password: String)?)
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
                        try pipeline.addHandler(
                            ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)),
                            name: "decoder"
                        )
                        try pipeline.addHandler(HTTPResponseEncoder(), name: "encoder")
                        try pipeline.addHandler(ConnectTunnel(expectedAuthorization: expected, log: log))
                    case .socks5(let credentials):
                        try pipeline.addHandler(SOCKSTunnel(credentials: credentials, log: log))
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
    private let state = Locked<(tunnels: [String], refusals: Int)>(([], 0))
    var tunnels: [String] { state.withLock { $0.tunnels } }
    var refusals: Int { state.withLock { $0.refusals } }
    func opened(_ target: String) { state.withLock { $0.tunnels.append(target) } }
    func refused() { state.withLock { $0.refusals += 1 } }
}

/// Joins `channel` and `peer` (on the same event loop) with a pair of glue handlers.
func join(_ channel: any Channel, _ peer: any Channel) throws {
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
                return refuse(
                    context,
                    .proxyAuthenticationRequired,
                    headers: [("Proxy-Authenticate", "Basic realm=\"courier\"")]
                )
            }
            guard let colon = head.uri.lastIndex(of: ":"), let port = Int(head.uri[head.uri.index(after: colon)...]),
                String(head.uri[..<colon]).isLoopbackHost
            else { return refuse(context, .forbidden) }
            target = (head.uri[..<colon].trimming { $0 == "[" || $0 == "]" }, port)
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

    private func refuse(
        _ context: ChannelHandlerContext,
        _ status: HTTPResponseStatus,
        headers: [(String, String)] = []
    ) {
        log.refused()
        var head = HTTPResponseHead(
            version: .http1_1,
            status: status,
            headers: HTTPHeaders(headers + [("Content-Length", "0")])
        )
        head.headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}

/// Serves one SOCKS5 connection (RFC 1928, with RFC 1929 username/password when the proxy has credentials):
/// `CONNECT` to a loopback target, then a tunnel. It reads raw bytes, so a client that hangs up mid-handshake
/// leaves nothing half-decoded behind.
private final class SOCKSTunnel: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Step { case greeting, authentication, request, connecting }

    private let credentials: (username: String, password: String)?
    private let log: ProxyLog
    private var step = Step.greeting
    private var received = ByteBuffer()

    init(credentials: (username: String, password: String)?, log: ProxyLog) {
        self.credentials = credentials
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var chunk = unwrapInboundIn(data)
        received.writeBuffer(&chunk)
        while let bytes = Array(received.readableBytesView) as [UInt8]?, !bytes.isEmpty, step != .connecting {
            switch step {
            case .greeting:
                guard bytes.count >= 2, bytes.count >= 2 + Int(bytes[1]) else { return }
                received.moveReaderIndex(forwardBy: 2 + Int(bytes[1]))
                let methods = bytes[2..<(2 + Int(bytes[1]))]
                let wanted: UInt8 = credentials == nil ? 0 : 2
                guard bytes[0] == 5, methods.contains(wanted) else { return refuse(context, reply: [5, 0xFF]) }
                write(context, [5, wanted])
                step = credentials == nil ? .request : .authentication
            case .authentication:
                guard let offered = Self.usernameAndPassword(bytes) else { return }
                received.moveReaderIndex(forwardBy: offered.length)
                guard offered.username == credentials?.username, offered.password == credentials?.password else {
                    return refuse(context, reply: [1, 1])
                }
                write(context, [1, 0])
                step = .request
            case .request:
                guard let request = Self.target(bytes) else { return }
                received.moveReaderIndex(forwardBy: request.length)
                guard bytes[1] == 1, request.host.isLoopbackHost else {
                    return refuse(context, reply: [5, 2, 0, 1, 0, 0, 0, 0, 0, 0])
                }
                step = .connecting
                connect(context, host: request.host, port: request.port)
            case .connecting:
                return
            }
        }
    }

    private func connect(_ context: ChannelHandlerContext, host: String, port: Int) {
        let channel = context.channel
        let log = self.log
        ClientBootstrap(group: context.eventLoop).connect(host: host, port: port).assumeIsolated().whenComplete {
            result in
            guard case .success(let peer) = result else {
                return self.refuse(context, reply: [5, 5, 0, 1, 0, 0, 0, 0, 0, 0])
            }
            self.write(context, [5, 0, 0, 1, 127, 0, 0, 1, 0, 0])
            let leftover = self.received
            do {
                _ = channel.pipeline.syncOperations.removeHandler(self)
                try join(channel, peer)
                if leftover.readableBytes > 0 { channel.pipeline.fireChannelRead(leftover) }
                log.opened("\(host):\(port)")
            } catch {
                peer.close(promise: nil)
                channel.close(promise: nil)
            }
        }
    }

    private func write(_ context: ChannelHandlerContext, _ bytes: [UInt8]) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
    }

    private func refuse(_ context: ChannelHandlerContext, reply: [UInt8]) {
        log.refused()
        step = .connecting  // read nothing more
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: reply))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    /// An RFC 1929 request at the front of `bytes`, once all of it has arrived.
    private static func usernameAndPassword(_ bytes: [UInt8]) -> (username: String, password: String, length: Int)? {
        guard bytes.count >= 2 else { return nil }
        let userEnd = 2 + Int(bytes[1])
        guard bytes.count > userEnd else { return nil }
        let passwordEnd = userEnd + 1 + Int(bytes[userEnd])
        guard bytes.count >= passwordEnd else { return nil }
        return (
            String(decoding: bytes[2..<userEnd], as: UTF8.self),
            String(decoding: bytes[(userEnd + 1)..<passwordEnd], as: UTF8.self),
            passwordEnd
        )
    }

    /// The host and port of a CONNECT request at the front of `bytes`, once all of it has arrived.
    private static func target(_ bytes: [UInt8]) -> (host: String, port: Int, length: Int)? {
        guard bytes.count >= 5 else { return nil }
        let host: String
        let addressEnd: Int
        switch bytes[3] {
        case 1:
            addressEnd = 8
            guard bytes.count >= addressEnd + 2 else { return nil }
            host = bytes[4..<8].map(String.init).joined(separator: ".")
        case 3:
            addressEnd = 5 + Int(bytes[4])
            guard bytes.count >= addressEnd + 2 else { return nil }
            host = String(decoding: bytes[5..<addressEnd], as: UTF8.self)
        default:
            addressEnd = 20
            guard bytes.count >= addressEnd + 2 else { return nil }
            host = bytes[4..<20] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1] ? "::1" : "?"
        }
        return (host, Int(bytes[addressEnd]) << 8 | Int(bytes[addressEnd + 1]), addressEnd + 2)
    }
}
