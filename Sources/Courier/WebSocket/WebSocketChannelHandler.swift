import NIOCore
import NIOWebSocket

/// What the caller writes to a connection: a message (a text message already in UTF-8, made on the caller's task
/// rather than the event loop), or its close.
enum WebSocketOutbound: Sendable {
    case message(WebSocketOpcode, ByteBuffer)
    case close(WebSocketCloseCode, reason: String)
}

/// Runs ``WebSocketStateMachine`` on the connection's event loop, between NIO's frame codec and the caller's
/// `NIOAsyncChannel`: frames in, whole messages out; the caller's messages in, masked (and, when negotiated,
/// deflated) frames out. Pongs, the answer to the server's close and the keep-alive's pings go out from here,
/// without a hop to the caller's task; so does the close frame of a failure, before the caller's sequence throws
/// its error.
///
/// A server that sends pings faster than it reads the pongs gets one pong at a time: while the channel is not
/// writable the handler keeps only the latest ping's pong (RFC 6455 §5.5.3 lets an endpoint answer only the most
/// recent ping) and reads nothing more, so the queue of unsent frames stays bounded by the channel's watermarks.
final class WebSocketChannelHandler: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketMessage
    typealias OutboundIn = WebSocketOutbound
    typealias OutboundOut = WebSocketFrame

    private var machine: WebSocketStateMachine
    private let deflate: PerMessageDeflate?
    private let options: WebSocketOptions
    /// Where the caller learns how the connection ended.
    private let ending: WebSocketEnding
    private var keepAlive: RepeatedTask?
    private var closeTimer: Scheduled<Void>?
    /// Where the frames' masking keys come from.
    private var random = BatchedSystemRandom()
    /// Whether a flush is queued on the event loop (see ``flush(context:)``).
    private var isFlushQueued = false
    /// The handler's place in the pipeline, while it is in one: what ``cancel()`` acts through.
    private var context: ChannelHandlerContext?
    /// The pong to the latest ping, kept while the channel is not writable (see the type's note).
    private var heldPong: ByteBuffer?
    /// Whether a read was asked for while a pong was held: it is passed on once the pong has gone.
    private var isReadHeld = false

    init(options: WebSocketOptions, compression: PerMessageDeflate.Parameters?, ending: WebSocketEnding) throws {
        self.options = options
        deflate = try compression.map(PerMessageDeflate.init)
        self.ending = ending
        machine = WebSocketStateMachine(
            maxMessageBytes: options.maxMessageBytes,
            maxFragments: options.maxFragments,
            compression: compression != nil
        )
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    /// The pipeline is the WebSocket's now (the HTTP/1 codec has left): starts the keep-alive. Before this, a
    /// ping would meet the HTTP request encoder, which takes only HTTP parts. Call on the event loop.
    func pipelineIsReady() {
        guard let context, let keepAliveOptions = options.keepAlive, keepAlive == nil, machine.isOpen else { return }
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        keepAlive = context.eventLoop.scheduleRepeatedTask(
            initialDelay: TimeAmount(keepAliveOptions.interval),
            delay: TimeAmount(keepAliveOptions.interval)
        ) { _ in
            let (handler, context) = loopBound.value
            handler.perform(handler.machine.keepAliveTick(now: .now, timeout: keepAliveOptions.timeout), context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        stopTimers()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, let pong = heldPong {
            heldPong = nil
            writeControl(.pong, pong, context)
            if isReadHeld {
                isReadHeld = false
                context.read()
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        guard heldPong == nil else {
            isReadHeld = true
            return
        }
        context.read()
    }

    /// The call was cancelled (by its task, the pool, or the session): close with
    /// ``WebSocketCloseCode/goingAway`` and end the caller's sequence with ``CourierError/Code/cancelled``. Call on
    /// the event loop.
    func cancel() {
        guard let context else { return }
        perform(machine.cancelled(), context)
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        perform(machine.received(unwrapInboundIn(data)), context)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIO's frame decoder refuses a frame announcing more than the limit before reading it, and control
        // frames that are fragmented or too long; anything else is the connection failing under the protocol.
        let action: WebSocketStateMachine.Action
        switch error as? NIOWebSocketError {
        case .invalidFrameLength?:
            action = machine.undecodable(
                .messageTooBig,
                "a frame announced more than the limit of \(options.maxMessageBytes) bytes"
            )
        case .fragmentedControlFrame?:
            action = machine.undecodable(.protocolError, "the server fragmented a control frame")
        case .multiByteControlFrameLength?:
            action = machine.undecodable(.protocolError, "the server sent a control frame longer than 125 bytes")
        case nil:
            // A reset, a TLS failure: the connection is gone, without a closing handshake.
            if machine.connectionEnded() != nil {
                let dropped = ending.dropped(by: error)
                ending.record(.failure(dropped))
                context.fireErrorCaught(dropped)
            }
            context.close(promise: nil)
            return
        }
        perform(action, context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopTimers()
        if let failure = machine.connectionEnded() {
            ending.record(.failure(failure.error))
            context.fireErrorCaught(failure.error)
        }
        context.fireChannelInactive()
    }

    // MARK: Outbound

    /// Flushes after the tasks already queued on the event loop: a caller sending faster than the loop writes
    /// queues a task per message, and the messages written meanwhile go out in one `writev` rather than one each.
    func flush(context: ChannelHandlerContext) {
        guard !isFlushQueued else { return }
        isFlushQueued = true
        context.eventLoop.assumeIsolated().execute {
            self.isFlushQueued = false
            context.flush()
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .message(let opcode, let payload):
            guard machine.isOpen else {
                promise?.fail(ending.error ?? CourierError(code: .connectionClosed, message: "the WebSocket is closed"))
                return
            }
            do {
                try send(opcode, payload, context, promise: promise)
            } catch {
                perform(machine.undecodable(.internalServerError, "a message could not be compressed"), context)
                promise?.fail(error)
            }
        case .close(let code, let reason):
            perform(machine.close(code, reason: reason), context)
            promise?.succeed()
        }
    }

    /// Writes a message as one frame, or as fragments of ``WebSocketOptions/maxOutgoingFrameBytes``; deflated
    /// first when permessage-deflate was agreed (RSV1 on the first frame). No flush: the caller's
    /// `NIOAsyncChannel` flushes once after the messages it hands over together.
    private func send(
        _ opcode: WebSocketOpcode,
        _ payload: ByteBuffer,
        _ context: ChannelHandlerContext,
        promise: EventLoopPromise<Void>?
    )
        throws
    {
        var payload = payload
        let compressed = deflate != nil
        if let deflate { payload = try deflate.deflate(payload) }
        var first = true
        repeat {
            let slice = payload.readSlice(length: min(payload.readableBytes, options.maxOutgoingFrameBytes)) ?? payload
            let frame = WebSocketFrame(
                fin: payload.readableBytes == 0,
                rsv1: first && compressed,
                opcode: first ? opcode : .continuation,
                maskKey: .random(using: &random),
                data: slice
            )
            first = false
            context.write(wrapOutboundOut(frame), promise: payload.readableBytes == 0 ? promise : nil)
        } while payload.readableBytes > 0
    }

    // MARK: Doing what the machine says

    private func perform(_ action: WebSocketStateMachine.Action, _ context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case .deliver(let opcode, let data, let compressed):
            deliver(opcode, data, compressed: compressed, context)
        case .pong(let payload):
            if context.channel.isWritable {
                writeControl(.pong, payload, context)
            } else {
                heldPong = payload
            }
        case .ping(let payload):
            writeControl(.ping, payload, context)
        case .sendClose(let code, let reason):
            writeClose(code, reason: reason, context)
            startCloseTimer(context)
        case .replyClose(let close):
            ending.record(.closed(close))
            let echoed = close.code == .noStatusReceived ? WebSocketCloseCode.normalClosure : close.code
            writeClose(echoed, reason: "", context)
            startCloseTimer(context)
        case .closeAnswered(let close):
            ending.record(.closed(close))
            startCloseTimer(context)
        case .fail(let failure):
            ending.record(.failure(failure.error))
            stopTimers()
            context.fireErrorCaught(failure.error)
            if failure.sendsClose {
                let written = context.eventLoop.makePromise(of: Void.self)
                writeClose(failure.closeCode, reason: "", context, promise: written)
                written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
            } else {
                context.close(promise: nil)
            }
        }
    }

    private func deliver(
        _ opcode: WebSocketOpcode,
        _ data: ByteBuffer,
        compressed: Bool,
        _ context: ChannelHandlerContext
    ) {
        var data = data
        if compressed, let deflate {
            do {
                data = try deflate.inflate(data, limit: options.maxMessageBytes)
            } catch .tooBig {
                return perform(
                    machine.undecodable(
                        .messageTooBig,
                        "a message inflated past the limit of \(options.maxMessageBytes) bytes"
                    ),
                    context
                )
            } catch {
                return perform(
                    machine.undecodable(.invalidFramePayloadData, "a compressed message is not a deflate stream"),
                    context
                )
            }
        }
        ending.noteDelivery()
        if opcode == .text {
            guard let text = try? data.readUTF8ValidatedString(length: data.readableBytes) else {
                return perform(machine.undecodable(.invalidFramePayloadData, "a text message is not UTF-8"), context)
            }
            context.fireChannelRead(wrapInboundOut(.text(text)))
        } else {
            context.fireChannelRead(wrapInboundOut(.binary(data)))
        }
    }

    private func writeControl(
        _ opcode: WebSocketOpcode,
        _ payload: ByteBuffer,
        _ context: ChannelHandlerContext,
        promise: EventLoopPromise<Void>? = nil
    ) {
        let frame = WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(using: &random), data: payload)
        context.writeAndFlush(wrapOutboundOut(frame), promise: promise)
    }

    private func writeClose(
        _ code: WebSocketCloseCode,
        reason: String,
        _ context: ChannelHandlerContext,
        promise: EventLoopPromise<Void>? = nil
    ) {
        // Nothing goes after a close frame: a pong still held for writability is dropped, and reading goes on.
        heldPong = nil
        if isReadHeld {
            isReadHeld = false
            context.read()
        }
        var payload = context.channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        payload.writeInteger(code.rawValue)
        payload.writeString(Self.fitting(reason))
        writeControl(.connectionClose, payload, context, promise: promise)
    }

    /// `reason` cut, at a character, to the 123 bytes a close frame has room for.
    static func fitting(_ reason: String) -> String { reason.prefix(utf8Bytes: 123) }

    /// Ends the connection if the server has not within the close timeout (RFC 6455 §7.1.1: the server closes
    /// the TCP connection first).
    private func startCloseTimer(_ context: ChannelHandlerContext) {
        keepAlive?.cancel()
        keepAlive = nil
        guard closeTimer == nil else { return }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        closeTimer = context.eventLoop.scheduleTask(in: TimeAmount(options.closeTimeout)) {
            loopBound.value.close(promise: nil)
        }
    }

    private func stopTimers() {
        keepAlive?.cancel()
        keepAlive = nil
        closeTimer?.cancel()
        closeTimer = nil
    }
}

@available(*, unavailable)
extension WebSocketChannelHandler: Sendable {}
