/// The status code of a WebSocket close frame (RFC 6455 §7.4), a number with names for the registered ones.
///
/// ```swift
/// try await socket.close(.normalClosure, reason: "done")
/// try await socket.close(WebSocketCloseCode(rawValue: 4001), reason: "logged out")   // an application's own code
/// ```
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The number as it travels.
    public let rawValue: UInt16

    /// Wraps a number; any value may be made, but only ``isSendable`` ones go on the wire.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection has been fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: the endpoint is going away (a server shutting down, a client leaving, a ping left unanswered).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: the peer broke the protocol.
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: the endpoint received a kind of data it cannot accept.
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1005: the close frame had no code (never sent; reported when a peer's close frame is empty).
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// 1006: the connection ended without a close frame (never sent; reported for a dropped connection).
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// 1007: a message's data did not match its type (text that is not UTF-8).
    public static let invalidFramePayloadData = WebSocketCloseCode(rawValue: 1007)
    /// 1008: a message broke the endpoint's policy (Courier: too many fragments in one message).
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a message was too big to process.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1010: the client expected the server to negotiate an extension it did not.
    public static let mandatoryExtension = WebSocketCloseCode(rawValue: 1010)
    /// 1011: the server met a condition that kept it from fulfilling the request.
    public static let internalServerError = WebSocketCloseCode(rawValue: 1011)

    /// Whether the code may travel in a close frame (RFC 6455 §7.4.1 and the IANA registry): 1000–1003,
    /// 1007–1014, and 3000–4999 (libraries' and applications' own). 1004–1006 and 1015 are reserved for reports,
    /// the rest unassigned.
    public var isSendable: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// `1000 (normal closure)`, or the bare number for codes with no name here.
    public var description: String {
        let names: [UInt16: String] = [
            1000: "normal closure", 1001: "going away", 1002: "protocol error", 1003: "unsupported data",
            1005: "no status received", 1006: "abnormal closure", 1007: "invalid frame payload data",
            1008: "policy violation", 1009: "message too big", 1010: "mandatory extension",
            1011: "internal server error",
        ]
        return names[rawValue].map { "\(rawValue) (\($0))" } ?? String(rawValue)
    }
}

/// How a WebSocket connection was closed: the code and reason of the close frame, and who sent it first.
public struct WebSocketClose: Sendable, Hashable, CustomStringConvertible {
    /// The code of the close frame; ``WebSocketCloseCode/noStatusReceived`` when the frame carried none,
    /// ``WebSocketCloseCode/abnormalClosure`` when the connection ended without one.
    public var code: WebSocketCloseCode
    /// The reason the frame gave (UTF-8, at most 123 bytes); empty when it gave none.
    public var reason: String
    /// Whether the server sent its close frame first; `false` when Courier (its caller, or a failure it found)
    /// started the closing handshake.
    public var byServer: Bool

    /// Creates a close.
    public init(code: WebSocketCloseCode, reason: String = "", byServer: Bool) {
        self.code = code
        self.reason = reason
        self.byServer = byServer
    }

    /// `closed by the server: 1000 (normal closure) "bye"`.
    public var description: String {
        let who = byServer ? "closed by the server" : "closed by the client"
        let why = reason.isEmpty ? "" : " \"\(CourierError.printable(reason, limit: 123))\""
        return "\(who): \(code)\(why)"
    }
}
