import NIOCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A message a WebSocket call sent or received, as the session's monitors see it in
/// ``DebugMessage/webSocketMessages``; ``HARRecorder`` writes them into the call's entry as browsers do
/// (`_webSocketMessages`).
public struct WebSocketMessageRecord: Sendable, Hashable {
    /// Which way a message went.
    public enum Direction: String, Sendable, Hashable {
        /// The caller sent it.
        case sent
        /// The server sent it.
        case received
    }

    /// Which way it went.
    public var direction: Direction
    /// When it was sent (handed to the connection) or received (handed to the caller).
    public var date: Date
    /// The message, or its first bytes when it is longer than a record keeps (a text message cut at a character).
    public var message: WebSocketMessage
    /// The whole message's size in bytes.
    public var byteCount: Int

    /// Creates a record.
    public init(direction: Direction, date: Date, message: WebSocketMessage, byteCount: Int) {
        self.direction = direction
        self.date = date
        self.message = message
        self.byteCount = byteCount
    }
}

/// The messages of one WebSocket call, kept while the session has monitors: at most ``maxMessages`` records, each
/// message cut to ``keptBytesPerMessage`` and all of them to ``maxKeptBytes`` (a connection open for days keeps
/// its memory bounded); the ones past the bounds are counted, not kept.
final class WebSocketTranscript: Sendable {
    static let maxMessages = 10_000
    static let keptBytesPerMessage = 64 * 1024
    static let maxKeptBytes = 4 * 1024 * 1024

    private struct State {
        var records: [WebSocketMessageRecord] = []
        var keptBytes = 0
        var leftOut = 0
    }

    private let state = Locked(State())

    /// The records kept, in order, and how many messages were left out.
    var records: (kept: [WebSocketMessageRecord], leftOut: Int) {
        state.withLock { ($0.records, $0.leftOut) }
    }

    /// Keeps `message` (or its first bytes) while there is room, else counts it.
    func record(_ message: WebSocketMessage, _ direction: WebSocketMessageRecord.Direction) {
        let date = Date()
        state.withLock { state in
            let room = min(Self.keptBytesPerMessage, Self.maxKeptBytes - state.keptBytes)
            guard state.records.count < Self.maxMessages, room > 0 || message.byteCount == 0 else {
                state.leftOut += 1
                return
            }
            let kept = Self.prefix(of: message, bytes: room)
            state.keptBytes += kept.byteCount
            state.records.append(
                WebSocketMessageRecord(direction: direction, date: date, message: kept, byteCount: message.byteCount)
            )
        }
    }

    /// `message` cut to `bytes` bytes: a text message at the last character that fits, a binary one copied, so
    /// the record does not hold on to the buffer the message was read into.
    static func prefix(of message: WebSocketMessage, bytes: Int) -> WebSocketMessage {
        switch message {
        case .text(let text):
            return .text(text.prefix(utf8Bytes: bytes))
        case .binary(let buffer):
            return .binary(ByteBuffer(bytes: buffer.readableBytesView.prefix(bytes)))
        }
    }
}
