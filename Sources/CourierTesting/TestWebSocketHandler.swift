import CompressNIO
import NIOCore
import NIOWebSocket

/// The server's side of one WebSocket connection of ``TestServer`` (see ``WebSocketRoute`` for the behaviours).
/// Frames from the client are decoded by NIO; frames to it are written as raw bytes, so a hostile one can be
/// anything.
final class TestWebSocketHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = ByteBuffer

    /// What the connection does.
    enum Behaviour {
        case echo(answersPings: Bool, dropAfter: Int?, dropCode: UInt16?)
        case close(code: UInt16, reason: String)
        case hostile(String)
        case flood(count: Int, size: Int)
        /// Sends "ready" and the first fragment of a message; the rest of the message goes after the client's
        /// close, before the answer to it.
        case fragmentAcrossClose

        init(name: String, query: [String: String]) {
            switch name {
            case "close": self = .close(code: query["code"].flatMap(UInt16.init) ?? 1000, reason: query["reason"] ?? "")
            case "hostile": self = .hostile(query["kind"] ?? "")
            case "flood":
                self = .flood(count: query["count"].flatMap(Int.init) ?? 1, size: query["size"].flatMap(Int.init) ?? 1)
            case "fragment-across-close": self = .fragmentAcrossClose
            case "silent": self = .echo(answersPings: false, dropAfter: nil, dropCode: nil)
            case "drop":
                self = .echo(
                    answersPings: true,
                    dropAfter: query["after"].flatMap(Int.init) ?? 0,
                    dropCode: query["code"].flatMap(UInt16.init)
                )
            default: self = .echo(answersPings: true, dropAfter: nil, dropCode: nil)
            }
        }
    }

    private let behaviour: Behaviour
    /// How long `echo` waits before it sends a message back (`?delay=MS`); an echo due after the client's close
    /// is not sent, as a server that has received a close sends nothing more (Python `websockets`).
    private let echoDelay: TimeAmount?
    private let path: String
    private let state: ServerState
    private let inflater: ZlibDecompressor?
    private let deflater: ZlibCompressor?
    /// The message whose first frames have come: its opcode, whether it is compressed, its bytes so far.
    private var message: (opcode: WebSocketOpcode, compressed: Bool, data: ByteBuffer)?
    private var received = 0
    private var sentClose = false
    private var receivedClose = false
    /// Messages `flood` has yet to send.
    private var floodLeft = 0

    init(_ behaviour: Behaviour, echoDelay: TimeAmount? = nil, path: String, deflates: Bool, state: ServerState) throws
    {
        self.behaviour = behaviour
        self.echoDelay = echoDelay
        self.path = path
        self.state = state
        inflater = deflates ? try ZlibDecompressor(algorithm: .deflate, windowSize: 15) : nil
        deflater = deflates ? try ZlibCompressor(algorithm: .deflate) : nil
    }

    func handlerAdded(context: ChannelHandlerContext) {
        switch behaviour {
        case .echo(_, let dropAfter?, let code) where dropAfter == 0:
            drop(context, code: code)
        case .echo:
            break
        case .close(let code, let reason):
            sendClose(context, code: code, reason: reason)
        case .hostile(let kind):
            sendHostile(kind, context)
        case .flood(let count, _):
            floodLeft = count
            pump(context)
        case .fragmentAcrossClose:
            context.write(wrapOutboundOut(Self.frame(opcode: 0x1, payload: ByteBuffer(string: "ready"))), promise: nil)
            write(context, Self.frame(opcode: 0x1, payload: ByteBuffer(string: "half "), fin: false))
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { pump(context) }
        context.fireChannelWritabilityChanged()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let payload = frame.unmaskedData
        switch frame.opcode {
        case .connectionClose:
            receivedClose = true
            if case .fragmentAcrossClose = behaviour {
                context.write(
                    wrapOutboundOut(Self.frame(opcode: 0x0, payload: ByteBuffer(string: "and the rest"))),
                    promise: nil
                )
            }
            var code = payload
            let number = code.readInteger(as: UInt16.self) ?? 1005
            if case .hostile(let kind) = behaviour {
                state.add("ws-client-close:\(kind)", Int(number))
            } else {
                state.add("ws-client-close:\(path)", Int(number))
            }
            floodLeft = 0
            // The answer goes after what is queued, and the connection closes once it has gone (closing at once
            // would drop both).
            if !sentClose {
                sendClose(context, code: number == 1005 ? 1000 : number, reason: "") {
                    context.close(promise: nil)
                }
            } else {
                context.close(promise: nil)
            }
        case .ping:
            if case .echo(false, _, _) = behaviour { return }
            write(context, Self.frame(opcode: 0xA, payload: payload))
        case .text, .binary, .continuation:
            collect(frame, payload, context)
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    // MARK: Messages

    private func collect(_ frame: WebSocketFrame, _ payload: ByteBuffer, _ context: ChannelHandlerContext) {
        var payload = payload
        if frame.opcode == .continuation {
            message?.data.writeBuffer(&payload)
        } else {
            message = (frame.opcode, frame.rsv1, payload)
        }
        guard frame.fin, let whole = message else { return }
        message = nil
        received += 1
        state.add("ws-messages:\(path)", 1)
        var data = whole.data
        if whole.compressed, let inflater {
            data.writeBytes([0, 0, 0xff, 0xff])
            guard let inflated = try? data.decompressStream(with: inflater, maxSize: 1 << 26) else {
                return sendClose(context, code: 1007, reason: "not deflate")
            }
            data = inflated
        }
        guard case .echo(_, let dropAfter, let code) = behaviour, !sentClose else { return }
        let opcode: UInt8 = whole.opcode == .text ? 0x1 : 0x2
        if let echoDelay {
            context.eventLoop.assumeIsolated().scheduleTask(in: echoDelay) {
                if !self.receivedClose, !self.sentClose { self.writeMessage(context, opcode: opcode, data) }
            }
            return
        }
        writeMessage(context, opcode: opcode, data)
        if let dropAfter, received >= dropAfter { drop(context, code: code) }
    }

    /// Writes a whole message, deflated when permessage-deflate was agreed.
    private func writeMessage(_ context: ChannelHandlerContext, opcode: UInt8, _ data: ByteBuffer) {
        var data = data
        guard let deflater, var compressed = try? data.compressStream(with: deflater, flush: .sync) else {
            return write(context, Self.frame(opcode: opcode, payload: data))
        }
        compressed.moveWriterIndex(to: compressed.writerIndex - 4)
        write(context, Self.frame(opcode: opcode, payload: compressed, rsv: 0x4))
    }

    /// Ends the connection without a close frame, or with `code`.
    private func drop(_ context: ChannelHandlerContext, code: UInt16?) {
        if let code { sendClose(context, code: code, reason: "") } else { context.close(promise: nil) }
    }

    private func pump(_ context: ChannelHandlerContext) {
        guard case .flood(_, let size) = behaviour else { return }
        while floodLeft > 0, context.channel.isWritable {
            floodLeft -= 1
            var data = context.channel.allocator.buffer(capacity: size)
            data.writeRepeatingByte(0x61, count: size)
            context.write(wrapOutboundOut(Self.frame(opcode: 0x2, payload: data)), promise: nil)
        }
        context.flush()
        if floodLeft == 0, !sentClose { sendClose(context, code: 1000, reason: "") }
    }

    /// Sends a close frame; `then` runs once it has been written.
    private func sendClose(
        _ context: ChannelHandlerContext,
        code: UInt16,
        reason: String,
        then: (() -> Void)? = nil
    ) {
        sentClose = true
        var payload = ByteBuffer()
        payload.writeInteger(code)
        payload.writeString(reason)
        let written = context.writeAndFlush(wrapOutboundOut(Self.frame(opcode: 0x8, payload: payload)))
        if let then { written.assumeIsolated().whenComplete { _ in then() } }
    }

    private func write(_ context: ChannelHandlerContext, _ bytes: ByteBuffer) {
        context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
    }

    // MARK: Hostile frames

    private func sendHostile(_ kind: String, _ context: ChannelHandlerContext) {
        let text = ByteBuffer(string: "hello")
        switch kind {
        case "oversize":
            // The header announces 64 MiB; a few bytes follow, the rest never does.
            write(context, Self.frame(opcode: 0x2, payload: ByteBuffer(string: "abc"), announcedLength: 64 << 20))
        case "long-message":
            var chunk = ByteBuffer()
            chunk.writeRepeatingByte(0x62, count: 64 << 10)
            write(context, Self.frame(opcode: 0x2, payload: chunk, fin: false))
            for _ in 0..<32 { write(context, Self.frame(opcode: 0x0, payload: chunk, fin: false)) }
        case "bad-utf8":
            write(context, Self.frame(opcode: 0x1, payload: ByteBuffer(bytes: [0x68, 0xff, 0xfe, 0x69])))
        case "masked":
            write(context, Self.frame(opcode: 0x1, payload: text, mask: [1, 2, 3, 4]))
        case "big-control":
            var payload = ByteBuffer()
            payload.writeRepeatingByte(0x70, count: 126)
            write(context, Self.frame(opcode: 0x9, payload: payload))
        case "reserved-bits":
            write(context, Self.frame(opcode: 0x1, payload: text, rsv: 0x2))
        case "rsv1":
            write(context, Self.frame(opcode: 0x1, payload: text, rsv: 0x4))
        case "bad-close-code":
            var payload = ByteBuffer()
            payload.writeInteger(UInt16(1005))
            write(context, Self.frame(opcode: 0x8, payload: payload))
            sentClose = true
        case "storm":
            write(context, Self.frame(opcode: 0x1, payload: ByteBuffer(string: "x"), fin: false))
            for _ in 0..<10_000 {
                context.write(wrapOutboundOut(Self.frame(opcode: 0x0, payload: ByteBuffer(), fin: false)), promise: nil)
            }
            context.flush()
        case "reserved-opcode":
            write(context, Self.frame(opcode: 0x3, payload: text))
        case "fragmented-control":
            write(context, Self.frame(opcode: 0x9, payload: text, fin: false))
        case "bad-deflate":
            write(
                context,
                Self.frame(opcode: 0x2, payload: ByteBuffer(bytes: [0xff, 0xff, 0xff, 0xff, 0x00]), rsv: 0x4)
            )
        case "drop":
            context.close(promise: nil)
        default:
            sendClose(context, code: 1000, reason: "unknown kind")
        }
    }

    /// The bytes of one frame: `fin`, the RSV bits (`rsv`, 0x4 for RSV1), the opcode, the payload (masked with
    /// `mask` when given), and a length field saying `announcedLength` when given, whatever follows.
    static func frame(
        opcode: UInt8,
        payload: ByteBuffer,
        fin: Bool = true,
        rsv: UInt8 = 0,
        mask: [UInt8]? = nil,
        announcedLength: Int? = nil
    ) -> ByteBuffer {
        var bytes = ByteBuffer()
        bytes.writeInteger((fin ? 0x80 : 0) | (rsv << 4) | opcode)
        let length = announcedLength ?? payload.readableBytes
        let maskBit: UInt8 = mask == nil ? 0 : 0x80
        if length < 126 {
            bytes.writeInteger(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            bytes.writeInteger(maskBit | 126)
            bytes.writeInteger(UInt16(length))
        } else {
            bytes.writeInteger(maskBit | 127)
            bytes.writeInteger(UInt64(length))
        }
        var body = payload
        if let mask {
            bytes.writeBytes(mask)
            var index = 0
            body = ByteBuffer(
                bytes: payload.readableBytesView.map { byte in
                    defer { index += 1 }
                    return byte ^ mask[index % 4]
                }
            )
        }
        bytes.writeBuffer(&body)
        return bytes
    }
}
