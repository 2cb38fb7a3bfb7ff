import NIOCore
import NIOWebSocket

/// The client's side of RFC 6455 once the handshake is done: what to do with each frame the server sends, with
/// the caller's close, with the keep-alive's tick, and with the end of the connection. It performs nothing (the
/// channel handler does what it says) and keeps no clock (events carry the time), so its tests feed it frames one
/// by one, hostile ones included.
///
/// Every way a server can break the protocol ends in ``Action/fail(_:)`` with the close code RFC 6455 gives it;
/// memory stays bounded by ``WebSocketOptions/maxMessageBytes`` (a frame announcing more is refused by NIO's frame
/// decoder before its payload is read) and the fragments of one message by ``WebSocketOptions/maxFragments``.
struct WebSocketStateMachine {
    /// What the handler does next.
    enum Action: Equatable {
        /// Nothing: a fragment was kept, a pong answered the keep-alive, a control frame came after Courier's close.
        case none
        /// A whole message arrived: inflate it when `compressed`, check text is UTF-8, then hand it on.
        case deliver(WebSocketOpcode, ByteBuffer, compressed: Bool)
        /// Answer a ping with this payload.
        case pong(ByteBuffer)
        /// Send a ping with this payload (the keep-alive).
        case ping(ByteBuffer)
        /// Send a close frame with this code and reason, then wait for the server's close and for it to end the
        /// connection (within the close timeout).
        case sendClose(WebSocketCloseCode, reason: String)
        /// The server closed first: send this code back and wait for it to end the connection.
        case replyClose(WebSocketClose)
        /// The server answered Courier's close: wait for it to end the connection.
        case closeAnswered(WebSocketClose)
        /// Fail the connection: send a close frame with the failure's code (when none went out yet), end the
        /// connection, and end the caller's sequence with the failure's error.
        case fail(WebSocketFailure)
    }

    private enum State: Equatable {
        case open
        /// Courier sent its close frame and waits for the server's.
        case closing
        /// Both close frames went, or the connection failed.
        case closed
    }

    /// A message whose first frames have arrived.
    private struct Assembly {
        let opcode: WebSocketOpcode
        let compressed: Bool
        var data: ByteBuffer
        var fragments: Int
    }

    private var state = State.open
    private var assembly: Assembly?
    /// The close Courier recorded: the server's frame, or the code Courier closed with.
    private(set) var close: WebSocketClose?
    /// The keep-alive's ping awaiting its pong: its number and when it went.
    private var outstandingPing: (number: UInt64, sentAt: Tick)?
    private var pingsSent: UInt64 = 0

    private let maxMessageBytes: Int
    private let maxFragments: Int
    /// Whether permessage-deflate was negotiated, which lets RSV1 mark a compressed message.
    private let compression: Bool

    init(maxMessageBytes: Int, maxFragments: Int, compression: Bool) {
        self.maxMessageBytes = maxMessageBytes
        self.maxFragments = maxFragments
        self.compression = compression
    }

    /// Whether the connection is open for the caller's messages.
    var isOpen: Bool { state == .open }

    // MARK: Frames from the server

    /// A frame arrived.
    mutating func received(_ frame: WebSocketFrame) -> Action {
        guard state != .closed else { return .none }
        guard frame.maskKey == nil else { return fail(.protocolError, "the server sent a masked frame") }
        guard !frame.rsv2, !frame.rsv3 else { return fail(.protocolError, "the server set reserved bits RSV2/RSV3") }
        switch frame.opcode {
        case .text, .binary, .continuation: return receivedData(frame)
        case .ping, .pong, .connectionClose: return receivedControl(frame)
        default: return fail(.protocolError, "the server sent a frame with the reserved opcode \(frame.opcode)")
        }
    }

    private mutating func receivedData(_ frame: WebSocketFrame) -> Action {
        let data = frame.data
        var message: Assembly
        if frame.opcode == .continuation {
            guard var started = assembly else {
                return fail(.protocolError, "the server sent a continuation frame with no message to continue")
            }
            guard !frame.rsv1 else { return fail(.protocolError, "the server set RSV1 on a continuation frame") }
            guard started.fragments < maxFragments else {
                return fail(.policyViolation, "a message came in more than \(maxFragments) fragments")
            }
            guard data.readableBytes <= maxMessageBytes - started.data.readableBytes else {
                return fail(.messageTooBig, "a message passed the limit of \(maxMessageBytes) bytes")
            }
            assembly = nil  // so the append below does not copy the buffer
            var more = data
            started.data.writeBuffer(&more)
            started.fragments += 1
            message = started
        } else {
            guard assembly == nil else {
                return fail(.protocolError, "the server began a message before it finished the one before")
            }
            guard !frame.rsv1 || compression else {
                return fail(.protocolError, "the server set RSV1 without permessage-deflate")
            }
            guard data.readableBytes <= maxMessageBytes else {
                return fail(.messageTooBig, "a message passed the limit of \(maxMessageBytes) bytes")
            }
            message = Assembly(opcode: frame.opcode, compressed: frame.rsv1, data: data, fragments: 1)
        }
        guard frame.fin else {
            assembly = message
            return .none
        }
        // After Courier's close, data may still arrive until the server's close (RFC 6455 §1.4): it is delivered,
        // as what the server sent before it read the close.
        return .deliver(message.opcode, message.data, compressed: message.compressed)
    }

    private mutating func receivedControl(_ frame: WebSocketFrame) -> Action {
        guard frame.fin else { return fail(.protocolError, "the server fragmented a control frame") }
        guard frame.length <= 125 else {
            return fail(.protocolError, "the server sent a control frame of \(frame.length) bytes (at most 125)")
        }
        guard !frame.rsv1 else { return fail(.protocolError, "the server set RSV1 on a control frame") }
        switch frame.opcode {
        case .ping:
            return state == .open ? .pong(frame.data) : .none
        case .pong:
            var payload = frame.data
            if let outstanding = outstandingPing, payload.readableBytes == 8,
                payload.readInteger(as: UInt64.self) == outstanding.number
            {
                outstandingPing = nil
            }
            return .none  // an unsolicited pong is a heartbeat (§5.5.3): ignored
        default:
            return receivedClose(frame.data)
        }
    }

    private mutating func receivedClose(_ payload: ByteBuffer) -> Action {
        var payload = payload
        let received: WebSocketClose
        switch payload.readableBytes {
        case 0:
            received = WebSocketClose(code: .noStatusReceived, byServer: state == .open)
        case 1:
            return fail(.protocolError, "the server's close frame has a one-byte code")
        default:
            let code = WebSocketCloseCode(rawValue: payload.readInteger(as: UInt16.self) ?? 0)
            guard code.isSendable else {
                return fail(.protocolError, "the server closed with the code \(code.rawValue), which may not be sent")
            }
            guard let reason = try? payload.readUTF8ValidatedString(length: payload.readableBytes) else {
                return fail(.invalidFramePayloadData, "the server's close reason is not UTF-8")
            }
            received = WebSocketClose(code: code, reason: reason, byServer: state == .open)
        }
        let wasOpen = state == .open
        state = .closed
        assembly = nil
        outstandingPing = nil
        if wasOpen {
            close = received
            return .replyClose(received)
        }
        return .closeAnswered(close ?? received)
    }

    /// A delivered message could not be read: its deflate stream was corrupt or too big, or its text not UTF-8.
    mutating func undecodable(_ code: WebSocketCloseCode, _ reason: String) -> Action {
        fail(code, reason)
    }

    // MARK: The caller, the clock, the connection

    /// The caller closes with `code` and `reason`; nothing when a close already went.
    mutating func close(_ code: WebSocketCloseCode, reason: String) -> Action {
        guard state == .open else { return .none }
        state = .closing
        // A message half received stays: its remaining frames may still come, and are delivered (RFC 6455 §1.4).
        outstandingPing = nil
        close = WebSocketClose(code: code, reason: reason, byServer: false)
        return .sendClose(code, reason: reason)
    }

    /// The call was cancelled: fail with ``WebSocketCloseCode/goingAway`` and ``CourierError/Code/cancelled``.
    mutating func cancelled() -> Action {
        guard state != .closed else { return .none }
        return fail(.goingAway, "the WebSocket call was cancelled", code: .cancelled)
    }

    /// The keep-alive's interval passed at `now`: a ping to send, or, when the last one's pong has not come
    /// within `timeout`, the failure.
    mutating func keepAliveTick(now: Tick, timeout: Duration) -> Action {
        guard state == .open else { return .none }
        if let outstanding = outstandingPing {
            guard now < outstanding.sentAt + timeout else {
                return fail(
                    .goingAway,
                    "the server answered no ping within \(timeout.formattedSeconds)",
                    code: .timeout
                )
            }
            return .none
        }
        pingsSent &+= 1
        outstandingPing = (pingsSent, now)
        var payload = ByteBuffer()
        payload.writeInteger(pingsSent)
        return .ping(payload)
    }

    /// The connection ended. Returns the failure to report when it ended before the closing handshake did
    /// (RFC 6455 §7.1.5's 1006), else `nil`.
    mutating func connectionEnded() -> WebSocketFailure? {
        defer { state = .closed }
        switch state {
        case .closed:
            return nil
        case .open, .closing:
            close = WebSocketClose(code: .abnormalClosure, byServer: true)
            var error = CourierError(
                code: .connectionClosed,
                message: state == .open
                    ? "the WebSocket connection ended without a close frame"
                    : "the WebSocket connection ended before the server answered the close"
            )
            error.webSocketCloseCode = .abnormalClosure
            return WebSocketFailure(closeCode: .abnormalClosure, sendsClose: false, error: error)
        }
    }

    private mutating func fail(
        _ closeCode: WebSocketCloseCode,
        _ reason: String,
        code: CourierError.Code = .webSocket
    ) -> Action {
        let sendsClose = state == .open
        state = .closed
        assembly = nil
        close = WebSocketClose(code: closeCode, reason: reason, byServer: false)
        var error = CourierError(code: code, message: "\(reason); closed with \(closeCode)")
        error.webSocketCloseCode = closeCode
        if code == .timeout { error.timeoutKind = .readIdle }
        return .fail(WebSocketFailure(closeCode: closeCode, sendsClose: sendsClose, error: error))
    }
}

/// How a connection failed: the code Courier closes with, whether a close frame still goes out, and the error the
/// caller hears.
struct WebSocketFailure: Equatable {
    let closeCode: WebSocketCloseCode
    let sendsClose: Bool
    let error: CourierError
}
