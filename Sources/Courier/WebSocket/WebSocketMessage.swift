public import NIOCore

/// One WebSocket message, its fragments joined: text (valid UTF-8, checked as it arrives) or bytes.
///
/// ```swift
/// for try await message in socket {
///     switch message {
///     case .text(let text): print(text)
///     case .binary(let bytes): print("\(bytes.readableBytes) bytes")
///     }
/// }
/// ```
public enum WebSocketMessage: Sendable, Hashable, CustomStringConvertible {
    /// A text message.
    case text(String)
    /// A binary message.
    case binary(ByteBuffer)

    /// How many bytes the message's payload holds (UTF-8 for text).
    public var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let bytes): bytes.readableBytes
        }
    }

    /// `text(12 bytes)` or `binary(4096 bytes)`: the size, never the content, which may be a secret.
    public var description: String {
        switch self {
        case .text: "text(\(byteCount) bytes)"
        case .binary: "binary(\(byteCount) bytes)"
        }
    }
}
