import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL

#if canImport(CCourierSystem)
import CCourierSystem
#else
import NIOPosix
#endif

/// Tells a request which connection carried it: what ``ConnectionFacts`` reports.
///
/// AsyncHTTPClient 1.37's delegate API does not say which connection serves a request. But it writes a request's
/// head on the connection's loop and, when the request's task runs on that loop too, tells the delegate
/// (`didSendRequestHead`) in the same call, before anything else runs on the thread. So a handler of Courier's on
/// each connection (HTTP/1.1) or stream (HTTP/2) notes the head it forwards in the connection's ``ConnectionSlot``
/// and publishes the slot as its thread's; the delegate takes it from there (``ConnectionSlot/take(for:)``). A
/// delegate on another loop (possible only with an `HTTPClient` of several loops passed to
/// ``AsyncHTTPClientTransport/init(client:logger:)``) finds its thread's slot noting another head, or none, and
/// learns nothing; it never learns a wrong connection.
final class ConnectionObserver: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private let slot: ConnectionSlot

    init(_ slot: ConnectionSlot) {
        self.slot = slot
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head(let head) = unwrapOutboundIn(data) { slot.publish(sending: head) }
        context.write(data, promise: promise)
    }
}

/// A ``ConnectionObserver`` that also tells the connection's ``ConnectionMeter`` when each answer ends, so the
/// open-connections gauge knows an idle connection from an active one: installed instead of it when the session
/// has metrics, so a session without them has no handler on its inbound path.
final class MeteredConnectionObserver: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private let slot: ConnectionSlot
    private var requestInFlight = false

    init(_ slot: ConnectionSlot) {
        self.slot = slot
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head(let head) = unwrapOutboundIn(data) {
            slot.publish(sending: head)
            requestInFlight = true
        }
        context.write(data, promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) { requestEnded() }
        context.fireChannelRead(data)
    }

    /// An HTTP/2 stream goes away after its answer, or instead of one when it was reset.
    func handlerRemoved(context: ChannelHandlerContext) {
        requestEnded()
    }

    private func requestEnded() {
        guard requestInFlight else { return }
        requestInFlight = false
        slot.meter?.requestEnded()
    }
}

/// The part of a connection its requests' delegates read: the connection's record, how many heads it has carried,
/// and the head going out now. It lives on the connection's loop and is only touched there: by the connection's
/// ``ConnectionObserver``s, and by delegates through their thread's slot, which only handlers of that thread set.
final class ConnectionSlot {
    let record: ConnectionRecord
    /// Where the connection's meter counts, when the session has metrics.
    private let metrics: CourierMetrics?
    /// The connection in the metrics, from its first request on.
    private(set) var meter: ConnectionMeter?
    private var headsSent = 0
    /// The head just written, until a delegate takes it: its URI, whether the connection had carried one before,
    /// and when it went out.
    private var pending: (uri: String, isReused: Bool, sent: Tick)?

    init(_ record: ConnectionRecord, metrics: CourierMetrics?) {
        self.record = record
        self.metrics = metrics
    }

    /// Notes `head` going out and makes this the thread's slot; counts the connection active in the metrics.
    func publish(sending head: HTTPRequestHead) {
        pending = (head.uri, headsSent > 0, .now)
        headsSent += 1
        Self.makeCurrent(self)
        guard let metrics else { return }
        if meter == nil {
            let server = ServerName(hostField: head.headers.first(name: "host"), isSecure: record.isSecure)
            meter = ConnectionMeter(metrics, record: record, host: server.host, port: server.port)
        }
        meter?.requestStarted()
    }

    /// The connection closed.
    func closed() {
        meter?.closed()
    }

    /// The use of the connection whose head the thread wrote last, when it is `head`'s (the same URI): once.
    static func take(for head: HTTPRequestHead) -> ConnectionUse? {
        guard let slot = current, let pending = slot.pending, pending.uri == head.uri else { return nil }
        slot.pending = nil
        return ConnectionUse(record: slot.record, isReused: pending.isReused, sent: pending.sent)
    }

    #if canImport(CCourierSystem)
    /// The thread's slot. The thread-local holds a retained reference, so a slot outlives its connection while a
    /// thread still points at it; it is released when another replaces it.
    private static var current: ConnectionSlot? {
        courier_connection_slot().map { Unmanaged<ConnectionSlot>.fromOpaque($0).takeUnretainedValue() }
    }

    private static func makeCurrent(_ slot: ConnectionSlot) {
        let pointer = Unmanaged.passUnretained(slot).toOpaque()
        guard courier_connection_slot() != pointer else { return }
        _ = Unmanaged.passRetained(slot)
        if let previous = courier_set_connection_slot(pointer) {
            Unmanaged<ConnectionSlot>.fromOpaque(previous).release()
        }
    }
    #else
    /// NIO's thread-specific variable where Courier's C module is not built. Read on the thread that set it only.
    nonisolated(unsafe) private static let threadSlot = ThreadSpecificVariable<ConnectionSlot>()

    private static var current: ConnectionSlot? { threadSlot.currentValue }

    private static func makeCurrent(_ slot: ConnectionSlot) {
        if threadSlot.currentValue !== slot { threadSlot.currentValue = slot }
    }
    #endif
}

/// Holds an HTTP/2 connection's slot on its channel, where the initialiser of each of its streams finds it. An
/// outbound handler (NIO takes no handler that is neither way) at the pipeline's tail, which only writes made on the
/// channel itself pass, and which forwards them as they are.
private final class ConnectionSlotHolder: ChannelOutboundHandler {
    typealias OutboundIn = NIOAny
    let slot: ConnectionSlot
    init(_ slot: ConnectionSlot) { self.slot = slot }
}

extension ConnectionObserver {
    /// A slot for `channel`, a connection AsyncHTTPClient has just opened speaking `version`: a record of its
    /// addresses, whether it has TLS, and now as the moment it was ready; told when the connection closes.
    private static func slot(_ channel: any Channel, version: String, metrics: CourierMetrics?) -> ConnectionSlot {
        let isSecure = (try? channel.pipeline.syncOperations.handler(type: NIOSSLHandler.self)) != nil
        let record = ConnectionRecord(
            remote: channel.remoteAddress,
            local: channel.localAddress,
            isSecure: isSecure,
            version: version,
            ready: .now
        )
        let slot = ConnectionSlot(record, metrics: metrics)
        if metrics != nil { channel.closeFuture.assumeIsolated().whenComplete { _ in slot.closed() } }
        return slot
    }

    /// The observer of a connection (HTTP/1.1) or stream (HTTP/2) whose heads go through `slot`.
    private static func observer(_ slot: ConnectionSlot, metered: Bool) -> any ChannelHandler {
        metered ? MeteredConnectionObserver(slot) : ConnectionObserver(slot)
    }

    /// `configuration` with an observer on every HTTP/1.1 connection (beside the response decoder, where the heads
    /// it sees are the ones AsyncHTTPClient writes) and every HTTP/2 stream (on the HTTP/1 side of its codec), ahead
    /// of any initialiser the caller set; their connections count in `metrics` when there are any.
    static func installing(
        on configuration: HTTPClient.Configuration,
        metrics: CourierMetrics?
    ) -> HTTPClient.Configuration {
        var configuration = configuration
        let metered = metrics != nil
        configuration.http1_1ConnectionDebugInitializer = ConnectionInitializers.chaining(
            { channel in
                let sync = channel.pipeline.syncOperations
                let decoder = try sync.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)
                let slot = slot(channel, version: "1.1", metrics: metrics)
                try sync.addHandler(observer(slot, metered: metered), position: .after(decoder))
            },
            before: configuration.http1_1ConnectionDebugInitializer
        )
        configuration.http2ConnectionDebugInitializer = ConnectionInitializers.chaining(
            { channel in
                let slot = slot(channel, version: "2", metrics: metrics)
                try channel.pipeline.syncOperations.addHandler(ConnectionSlotHolder(slot))
            },
            before: configuration.http2ConnectionDebugInitializer
        )
        configuration.http2StreamChannelDebugInitializer = ConnectionInitializers.chaining(
            { stream in
                guard let connection = stream.parent,
                    let holder = try? connection.pipeline.syncOperations.handler(type: ConnectionSlotHolder.self)
                else { return }
                let sync = stream.pipeline.syncOperations
                let codec = try sync.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self)
                try sync.addHandler(observer(holder.slot, metered: metered), position: .after(codec))
            },
            before: configuration.http2StreamChannelDebugInitializer
        )
        return configuration
    }
}
