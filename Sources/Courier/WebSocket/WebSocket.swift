public import HTTPTypes
import NIOCore
import NIOWebSocket
import Synchronization

/// An open WebSocket connection, inside ``Session/webSocket(_:options:_:)``: an `AsyncSequence` of the
/// server's messages, and a writer.
///
/// ```swift
/// try await session.webSocket(.get("wss://chat.example.com/room/1")) { socket in
///     try await socket.send("hello")
///     for try await message in socket {
///         if case .text(let text) = message { print(text) }
///     }
/// }
/// ```
///
/// The sequence ends when the connection closes with a closing handshake (``closed`` says how), and throws a
/// ``CourierError`` when it fails: ``CourierError/Code/webSocket`` for a server that broke the protocol or a
/// message past the limits (with the code Courier closed with), ``CourierError/Code/connectionClosed`` or
/// ``CourierError/Code/connectionReset`` for a connection that dropped, ``CourierError/Code/timeout`` for a ping
/// left unanswered, ``CourierError/Code/cancelled``. It can be iterated once.
public final class WebSocket: AsyncSequence, Sendable {
    /// A message.
    public typealias Element = WebSocketMessage

    /// The server's `101 Switching Protocols`.
    public let response: HTTPResponse
    /// The subprotocol the server chose from ``WebSocketOptions/subprotocols``, if any.
    public let subprotocol: String?
    /// Whether messages are compressed (permessage-deflate was offered and accepted).
    public let isCompressed: Bool
    /// 1 for the call's first connection; each reconnection adds one.
    public let connectionNumber: Int
    /// For a reconnection, why the connection before this one ended; `nil` for the first.
    public let previousDrop: CourierError?

    private let link: WebSocketLink
    private let inbound: NIOAsyncChannelInboundStream<WebSocketMessage>
    private let outbound: NIOAsyncChannelOutboundWriter<WebSocketOutbound>
    /// Whether a drop-like close by the server (going away, restarting) ends the sequence with an error, so a
    /// reconnecting call goes on.
    private let serverClosesAsDrops: Bool
    /// Where the messages are kept for the monitors, when the session has any.
    private let transcript: WebSocketTranscript?
    private let iterated = Atomic<Bool>(false)
    /// Whether the caller started the closing handshake: no message may follow its close frame.
    private let isClosing = Atomic<Bool>(false)

    init(
        response: HTTPResponse,
        link: WebSocketLink,
        inbound: NIOAsyncChannelInboundStream<WebSocketMessage>,
        outbound: NIOAsyncChannelOutboundWriter<WebSocketOutbound>,
        connectionNumber: Int,
        previousDrop: CourierError?,
        serverClosesAsDrops: Bool,
        transcript: WebSocketTranscript?
    ) {
        self.response = response
        self.link = link
        self.inbound = inbound
        self.outbound = outbound
        subprotocol = link.agreement.subprotocol
        isCompressed = link.agreement.compression != nil
        self.connectionNumber = connectionNumber
        self.previousDrop = previousDrop
        self.serverClosesAsDrops = serverClosesAsDrops
        self.transcript = transcript
    }

    /// How the connection was closed, once it has been: the close frame's code and reason and who sent it first;
    /// ``WebSocketCloseCode/abnormalClosure`` when it dropped. `nil` while it is open.
    public var closed: WebSocketClose? {
        switch link.ending.ending {
        case .closed(let close)?: close
        case .failure(let error)?:
            WebSocketClose(code: error.webSocketCloseCode ?? .abnormalClosure, reason: error.message, byServer: false)
        case nil: nil
        }
    }

    /// Sends `message`, in fragments when it is longer than ``WebSocketOptions/maxOutgoingFrameBytes``. Waits
    /// while the connection cannot take more (the server reads slower than the caller writes), so memory stays
    /// flat. Throws once the connection is closing or closed.
    public func send(_ message: WebSocketMessage) async throws {
        try checkOpen()
        do {
            try await outbound.write(Self.outbound(message))
        } catch {
            throw link.ending.error ?? Self.closedError
        }
        transcript?.record(message, .sent)
    }

    /// Sends a text message.
    public func send(_ text: String) async throws {
        try await send(.text(text))
    }

    /// Starts the closing handshake with `code` (one that ``WebSocketCloseCode/isSendable``) and `reason` (cut to
    /// 123 bytes); the sequence ends once the server answers and ends the connection, or after
    /// ``WebSocketOptions/closeTimeout``. Nothing happens when the connection is already closing.
    public func close(_ code: WebSocketCloseCode = .normalClosure, reason: String = "") async throws {
        guard code.isSendable else {
            throw CourierError(code: .invalidParameter, message: "the close code \(code.rawValue) may not be sent")
        }
        guard link.ending.ending == nil, !isClosing.exchange(true, ordering: .relaxed) else { return }
        do {
            try await outbound.write(.close(code, reason: reason))
        } catch {
            // Closed meanwhile: nothing left to close.
        }
    }

    private func checkOpen() throws {
        switch link.ending.ending {
        case nil:
            guard !isClosing.load(ordering: .relaxed) else {
                throw CourierError(code: .connectionClosed, message: "the WebSocket is closing: close() was called")
            }
        case .failure(let error)?: throw error
        case .closed(let close)?:
            throw CourierError(code: .connectionClosed, message: "the WebSocket is closed (\(close))")
        }
    }

    /// `message` as the connection's handler takes it: a text message in UTF-8.
    private static func outbound(_ message: WebSocketMessage) -> WebSocketOutbound {
        switch message {
        case .text(let text): .message(.text, allocator.buffer(string: text))
        case .binary(let bytes): .message(.binary, bytes)
        }
    }

    private static let allocator = ByteBufferAllocator()

    private static let closedError = CourierError(code: .connectionClosed, message: "the WebSocket is closed")

    /// The iterator; a second one ends at once with ``CourierError/Code/invalidState``.
    public func makeAsyncIterator() -> AsyncIterator {
        let first = !iterated.exchange(true, ordering: .relaxed)
        return AsyncIterator(
            base: first ? inbound.makeAsyncIterator() : nil,
            ending: link.ending,
            serverClosesAsDrops: serverClosesAsDrops,
            transcript: transcript
        )
    }

    /// Reads the server's messages.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var base: NIOAsyncChannelInboundStream<WebSocketMessage>.AsyncIterator?
        private let ending: WebSocketEnding
        private let serverClosesAsDrops: Bool
        private let transcript: WebSocketTranscript?
        private var isFirst = true

        fileprivate init(
            base: NIOAsyncChannelInboundStream<WebSocketMessage>.AsyncIterator?,
            ending: WebSocketEnding,
            serverClosesAsDrops: Bool,
            transcript: WebSocketTranscript?
        ) {
            self.base = base
            self.ending = ending
            self.serverClosesAsDrops = serverClosesAsDrops
            self.transcript = transcript
        }

        /// The next message; `nil` once the connection closed with a closing handshake.
        public mutating func next() async throws -> WebSocketMessage? {
            guard base != nil else {
                guard isFirst else { return nil }
                isFirst = false
                throw CourierError(code: .invalidState, message: "a WebSocket's messages can be iterated once")
            }
            let message: WebSocketMessage?
            do {
                message = try await base?.next()
            } catch {
                base = nil
                isFirst = false
                throw ending.error ?? ending.dropped(by: error)
            }
            if let message {
                transcript?.record(message, .received)
                return message
            }
            base = nil
            isFirst = false
            switch ending.ending {
            case .failure(let error)?:
                throw error
            case .closed(let close)? where serverClosesAsDrops && close.byServer && close.code.meansTryAgain:
                var error = CourierError(code: .connectionClosed, message: "the WebSocket was \(close)")
                error.webSocketCloseCode = close.code
                throw error
            default:
                return nil
            }
        }
    }
}

extension WebSocketCloseCode {
    /// Whether a server closing with this code means "not now" rather than "done": going away (a restart, a
    /// deploy), an internal error, service restart, try again later, bad gateway.
    var meansTryAgain: Bool { [1001, 1011, 1012, 1013, 1014].contains(rawValue) }
}
