import Courier
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// The in-process server the scenarios measure against: a plain SwiftNIO handler on its own event loop that
/// answers `/small` with 1 KiB, like a static file server, and `/delay/MS` with the same body after MS
/// milliseconds (a slow endpoint, scheduled on the event loop). It counts hits per path. It runs no Swift tasks, so it does not compete with
/// the contenders for the cooperative thread pool (the fault-injecting test server would).
final class BenchServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let counters: HitCounters
    let baseURL: URL

    static let small = String(repeating: "courier-", count: 128)
    /// 1 KiB of JSON, for the cache scenarios.
    static let smallJSON: String = {
        let items = (0..<19).map { #"{"id":\#($0 + 100),"name":"courier","ok":true}"# }.joined(separator: ",")
        let text = #"{"items":[\#(items)],"pad":""#
        return text + String(repeating: "x", count: 1024 - text.utf8.count - 2) + #""}"#
    }()

    private init(group: MultiThreadedEventLoopGroup, channel: any Channel, counters: HitCounters, baseURL: URL) {
        self.group = group
        self.channel = channel
        self.counters = counters
        self.baseURL = baseURL
    }

    /// Requests that reached `path` (without its query) so far.
    func hits(_ path: String) -> Int { counters.hits(path) }

    static func start() async throws -> BenchServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let counters = HitCounters()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(SmallHandler(counters: counters))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        guard let url = URL(string: "http://127.0.0.1:\(port)") else { throw BenchError.unexpected("no port") }
        return BenchServer(group: group, channel: channel, counters: counters, baseURL: url)
    }

    func shutdown() async throws {
        try await channel.close()
        try await group.shutdownGracefully()
    }
}

/// Hits per path, shared by every connection.
final class HitCounters: Sendable {
    private let counts = Locked<[String: Int]>([:])

    func record(_ path: String) { counts.withLock { $0[path, default: 0] += 1 } }
    func hits(_ path: String) -> Int { counts.withLock { $0[path] ?? 0 } }
}

/// Answers `/small`, `/delay/MS` and `/upload` (whose request body it reads and drops) with the 1 KiB body, `/json` with 1 KiB of JSON, `/events/N` with N server-sent events, `/blob/N` with N bytes
/// (one `Range` honoured, `?rate=B` paces each connection to B bytes per second; see ``BlobSender``), and 404
/// for other paths, keeping the connection open.
private final class SmallHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let counters: HitCounters
    private var head: HTTPRequestHead?
    private var path = ""
    private var keepAlive = true
    private var blob: BlobSender?

    init(counters: HitCounters) {
        self.counters = counters
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            path = String(head.uri.prefix { $0 != "?" })
            keepAlive = head.isKeepAlive
        case .body:
            break
        case .end:
            counters.record(path)
            if path.hasPrefix("/delay/"), let ms = Int(path.dropFirst("/delay/".count)) {
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(in: .milliseconds(Int64(ms))) {
                    let (handler, context) = loopBound.value
                    handler.respond(context: context, found: true)
                }
            } else if path.hasPrefix("/events/"), let head, let count = Int(path.dropFirst("/events/".count)) {
                let sender = BlobSender(
                    head: head,
                    size: 0,
                    source: BlobSender.events(count),
                    contentType: "text/event-stream"
                )
                blob = sender
                sender.start(context: context)
            } else if path.hasPrefix("/blob/"), let head, let size = Int(path.dropFirst("/blob/".count)) {
                let sender = BlobSender(head: head, size: size)
                blob = sender
                sender.start(context: context)
            } else {
                respond(
                    context: context,
                    found: path == "/small" || path == "/json" || path == "/upload",
                    json: path == "/json"
                )
            }
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { blob?.send(context: context) }
        context.fireChannelWritabilityChanged()
    }

    private func respond(context: ChannelHandlerContext, found: Bool, json: Bool = false) {
        let body = ByteBuffer(string: found ? (json ? BenchServer.smallJSON : BenchServer.small) : "not found")
        var headers = HTTPHeaders([
            ("Content-Type", json ? "application/json" : "text/plain"), ("Content-Length", String(body.readableBytes)),
        ])
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(
            wrapOutboundOut(
                .head(HTTPResponseHead(version: .http1_1, status: found ? .ok : .notFound, headers: headers))
            ),
            promise: nil
        )
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        let keepAlive = self.keepAlive
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            if !keepAlive { loopBound.value.close(promise: nil) }
        }
    }
}
