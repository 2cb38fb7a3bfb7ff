import NIOCore
import NIOHTTP1
import NIOWebSocket

/// Sends the upgrade request on a connection ready for it (TCP, through a proxy's tunnel, after TLS) and reads
/// the answer. A 101 that passes ``WebSocketHandshake/check(_:)`` turns the pipeline into a WebSocket one (NIO's
/// frame codec, ``WebSocketChannelHandler``, an `NIOAsyncChannel` for the caller), with the bytes that came after
/// the 101 handed to the frame decoder; any other answer is reported with its head and the start of its body (for
/// the error's preview and the authenticator), and the connection is closed.
final class WebSocketHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    /// How the handshake ended; each with the connection it used, for the call's timing.
    enum Outcome {
        /// The server switched protocols: the connection as the caller uses it, and what the 101 agreed to.
        case upgraded(WebSocketLink, HTTPResponseHead, ConnectionUse?)
        /// The server answered otherwise: its head and the first bytes of its body.
        case refused(HTTPResponseHead, ByteBuffer, ConnectionUse?)
    }

    /// The most of a refusal's body kept for the error's preview.
    static let previewBytes = 2048

    private let handshake: WebSocketHandshake
    private let options: WebSocketOptions
    private let ending: WebSocketEnding
    private let httpHandlers: [any RemovableChannelHandler]
    private let isSecure: Bool
    private let completed: (Result<Outcome, CourierError>) -> Void
    private var response: HTTPResponseHead?
    private var preview = ByteBuffer()
    private var sentRequest = false
    /// The connection, and when the request went out on it: set as it goes.
    private var use: ConnectionUse?
    private var isDone = false
    /// Reads that arrive while the HTTP/1 codec leaves the pipeline, for the frame decoder once it has.
    private var heldBack: [NIOAny]?
    /// Stands before the HTTP/1 codec and holds the connection's end while the codec leaves (see ``EndGate``).
    private let gate: EndGate

    /// A handler that sends `handshake` and reports to `completed` once; `httpHandlers` are the HTTP/1 codec it
    /// removes when the server switches protocols, with `gate` before them; `isSecure` says whether the
    /// connection is TLS.
    init(
        _ handshake: WebSocketHandshake,
        options: WebSocketOptions,
        ending: WebSocketEnding,
        gate: EndGate,
        httpHandlers: [any RemovableChannelHandler],
        isSecure: Bool,
        completed: @escaping (Result<Outcome, CourierError>) -> Void
    ) {
        self.handshake = handshake
        self.options = options
        self.ending = ending
        self.gate = gate
        self.httpHandlers = httpHandlers
        self.isSecure = isSecure
        self.completed = completed
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { sendRequest(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        sendRequest(context)
        context.fireChannelActive()
    }

    private func sendRequest(_ context: ChannelHandlerContext) {
        guard !sentRequest else { return }
        sentRequest = true
        // The connection is ready now: connected, through the proxy's tunnel and TLS when there are.
        let now = Tick.now
        let record = ConnectionRecord(
            remote: context.channel.remoteAddress,
            local: context.channel.localAddress,
            isSecure: isSecure,
            version: "1.1",
            ready: now
        )
        use = ConnectionUse(record: record, isReused: false, sent: now)
        context.write(wrapOutboundOut(.head(handshake.head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if var waiting = heldBack {
            // The bytes after the 101, which the response decoder hands on as it leaves: kept until it has left.
            waiting.append(data)
            heldBack = waiting
            return
        }
        guard !isDone else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            // An interim answer (100 Continue, 103 Early Hints) is not the answer.
            if head.status == .switchingProtocols || head.status.code >= 200 { response = head }
        case .body(var chunk):
            guard response?.status != .switchingProtocols else { return }
            let room = Self.previewBytes - preview.readableBytes
            if room > 0, let kept = chunk.readSlice(length: min(room, chunk.readableBytes)) {
                var kept = kept
                preview.writeBuffer(&kept)
            }
        case .end:
            guard let response else { return }
            isDone = true
            if response.status == .switchingProtocols {
                upgrade(context, response)
            } else {
                completed(.success(.refused(response, preview, use)))
                context.close(promise: nil)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(
            context,
            CourierError(
                code: .connectionClosed,
                message: "the server closed the connection before it answered the WebSocket handshake"
            )
        )
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(context, ending.failed(by: error))
    }

    private func fail(_ context: ChannelHandlerContext, _ error: CourierError) {
        guard !isDone else { return }
        isDone = true
        completed(.failure(error))
        context.close(promise: nil)
    }

    /// Checks the 101 and puts the WebSocket handlers in place of the HTTP/1 codec, all within this call on the
    /// event loop, so no byte the server sent after the 101 reaches a handler that would misread it.
    private func upgrade(_ context: ChannelHandlerContext, _ response: HTTPResponseHead) {
        do {
            let agreement = try handshake.check(response)
            let handler = try WebSocketChannelHandler(
                options: options,
                compression: agreement.compression,
                ending: ending
            )
            let pipeline = context.pipeline.syncOperations
            try pipeline.addHandlers(
                [
                    ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: options.maxMessageBytes)),
                    WebSocketFrameEncoder(), handler,
                ],
                position: .after(self)
            )
            let channel = try NIOAsyncChannel<WebSocketMessage, WebSocketOutbound>(
                wrappingChannelSynchronously: context.channel
            )
            let link = WebSocketLink(
                channel: channel,
                handler: NIOLoopBound(handler, eventLoop: context.eventLoop),
                agreement: agreement,
                ending: ending
            )
            // The response decoder is in the middle of handing over the 101: it leaves once that call returns,
            // handing on the bytes that came after it, which wait here until it is gone (as a write would meet its
            // write-observing half). Then they go to the frame decoder, and this handler leaves too.
            heldBack = []
            gate.isHolding = true
            let httpContexts = try httpHandlers.map { try pipeline.context(handler: $0) }
            let removals = httpContexts.map { httpContext in
                let removed = context.eventLoop.makePromise(of: Void.self)
                pipeline.removeHandler(context: httpContext, promise: removed)
                return removed.futureResult
            }
            EventLoopFuture.andAllComplete(removals, on: context.eventLoop).assumeIsolated().whenComplete { _ in
                let held = self.heldBack ?? []
                self.heldBack = nil
                for data in held { context.fireChannelRead(data) }
                if !held.isEmpty { context.fireChannelReadComplete() }
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                if !self.gate.open(context.pipeline) { handler.pipelineIsReady() }
                self.completed(.success(.upgraded(link, response, self.use)))
            }
        } catch {
            completed(.failure(error as? CourierError ?? ending.failed(by: error)))
            context.close(promise: nil)
        }
    }
}

@available(*, unavailable)
extension WebSocketHandshakeHandler: Sendable {}

extension WebSocketHandshakeHandler {
    /// Stands before the HTTP/1 codec and, while the codec leaves the pipeline after a 101, holds the end of the
    /// connection (and an error) back from it. The response decoder hands on the bytes that came after the 101
    /// only when it leaves; told of the end first, it would drop them (NIO's `HTTPDecoder.decodeLast` with
    /// `seenEOF`), and with them the frames a server sent with its 101 before it closed, its close among them.
    final class EndGate: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny

        /// Set when the upgrade starts.
        var isHolding = false
        private var held: Held?
        private var context: ChannelHandlerContext?

        private enum Held {
            case inactive
            case error(any Error)
        }

        func handlerAdded(context: ChannelHandlerContext) { self.context = context }

        func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

        func channelInactive(context: ChannelHandlerContext) {
            guard isHolding else { return context.fireChannelInactive() }
            held = .inactive
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            guard isHolding else { return context.fireErrorCaught(error) }
            if held == nil { held = .error(error) }
        }

        /// The codec has left and the bytes it held have been read: passes on what was held and leaves. Returns
        /// whether the connection had ended meanwhile.
        func open(_ pipeline: ChannelPipeline) -> Bool {
            isHolding = false
            let ended = held != nil
            if let context {
                switch held {
                case .inactive?: context.fireChannelInactive()
                case .error(let error)?: context.fireErrorCaught(error)
                case nil: break
                }
                pipeline.syncOperations.removeHandler(context: context, promise: nil)
            }
            held = nil
            return ended
        }
    }
}
