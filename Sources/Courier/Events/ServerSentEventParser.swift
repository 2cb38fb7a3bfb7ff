/// The event-stream parser of the WHATWG HTML standard (§9.2.6), fed chunk by chunk as they arrive: a pure value,
/// so every rule is tested without a connection.
///
/// - UTF-8, one byte-order mark at the very start of the stream skipped; invalid bytes become U+FFFD.
/// - Lines end with CRLF, LF or CR, also when the two bytes of a CRLF arrive in different chunks.
/// - A line starting with a colon is a comment. A line without a colon is a field with an empty value. One space
///   after the colon is not part of the value.
/// - `data` lines are joined by line feeds; `event` sets the type; `id` sets the last event ID unless its value
///   holds NUL; `retry` sets the reconnection time when its value is ASCII digits only; other fields are ignored.
/// - An event is dispatched at a blank line, and only when it has data. A stream that ends mid-event drops the
///   incomplete event (``finish()`` only forgets it).
///
/// A hostile server cannot make it hold more than `maxEventBytes` (the line being read and the event's data
/// together): past that it throws ``CourierError/Code/bodyTooLarge``.
struct ServerSentEventParser {
    /// The last event ID string: it outlives the connection, and a reconnection sends it.
    private(set) var lastEventID = ""
    /// The reconnection time of the latest valid `retry` field, if any.
    private(set) var reconnectionTime: Duration?

    private let maxEventBytes: Int
    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var eventType = ""
    private var retryOfEvent: Duration?
    /// The stream's first bytes matched against the byte-order mark so far; `nil` once past it.
    private var byteOrderMarkMatched: Int? = 0
    /// The previous chunk ended with CR: a LF starting this one completes that CRLF, not a blank line.
    private var afterCR = false

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")

    init(maxEventBytes: Int = 1 << 20) {
        self.maxEventBytes = max(1, maxEventBytes)
    }

    /// Starts from `lastEventID`, as a stream resumed from an earlier one does.
    mutating func resume(from lastEventID: String) {
        self.lastEventID = lastEventID
    }

    /// Parses `bytes`, the next part of the stream, appending the events it completes to `events`.
    mutating func parse(_ bytes: some Collection<UInt8>, into events: inout [ServerSentEvent]) throws(CourierError) {
        var index = bytes.startIndex
        while index != bytes.endIndex, let matched = byteOrderMarkMatched {
            if bytes[index] == Self.byteOrderMark[matched] {
                byteOrderMarkMatched = matched + 1 == Self.byteOrderMark.count ? nil : matched + 1
                index = bytes.index(after: index)
            } else {
                // Not a byte-order mark after all: the bytes taken so far were text.
                line.append(contentsOf: Self.byteOrderMark[..<matched])
                byteOrderMarkMatched = nil
            }
        }
        while index != bytes.endIndex {
            if afterCR {
                afterCR = false
                if bytes[index] == Self.lineFeed {  // the LF of a CRLF split across chunks
                    index = bytes.index(after: index)
                    continue
                }
            }
            let end = bytes[index...].firstIndex { $0 == Self.lineFeed || $0 == Self.carriageReturn }
            line.append(contentsOf: bytes[index..<(end ?? bytes.endIndex)])
            if line.count + data.count > maxEventBytes { throw tooLarge() }
            guard let end else { return }
            afterCR = bytes[end] == Self.carriageReturn
            index = bytes.index(after: end)
            try endLine(into: &events)
        }
    }

    /// The stream ended (or the connection dropped): the line and the event in progress are dropped, as the
    /// standard says, and the next stream starts afresh. The last event ID and the reconnection time stay.
    mutating func finish() {
        line.removeAll(keepingCapacity: true)
        data.removeAll(keepingCapacity: true)
        hasData = false
        eventType = ""
        retryOfEvent = nil
        byteOrderMarkMatched = 0
        afterCR = false
    }

    private mutating func endLine(into events: inout [ServerSentEvent]) throws(CourierError) {
        defer { line.removeAll(keepingCapacity: true) }
        guard let first = line.first else { return dispatch(into: &events) }
        guard first != UInt8(ascii: ":") else { return }  // a comment
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        var valueStart = colon == line.endIndex ? colon : colon + 1
        if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = line[valueStart...]
        switch String(decoding: line[..<colon], as: UTF8.self) {
        case "data":
            if hasData { data.append(UInt8(ascii: "\n")) }
            data.append(contentsOf: value)
            hasData = true
            if data.count > maxEventBytes { throw tooLarge() }
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "id" where !value.contains(0):
            lastEventID = String(decoding: value, as: UTF8.self)
        case "retry":
            if let milliseconds = Self.digits(value) {
                reconnectionTime = .milliseconds(milliseconds)
                retryOfEvent = reconnectionTime
            }
        default:
            break  // an unknown field, or an id holding NUL
        }
    }

    private mutating func dispatch(into events: inout [ServerSentEvent]) {
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
            eventType = ""
        }
        guard hasData else { return }
        events.append(
            ServerSentEvent(
                id: lastEventID,
                event: eventType.isEmpty ? "message" : eventType,
                data: String(decoding: data, as: UTF8.self),
                retry: retryOfEvent
            )
        )
        retryOfEvent = nil
    }

    /// The value as a base-ten number when it is ASCII digits only and fits an `Int64`.
    private static func digits(_ value: ArraySlice<UInt8>) -> Int64? {
        guard !value.isEmpty else { return nil }
        var number: Int64 = 0
        for byte in value {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times10, overflowA) = number.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { return nil }
            number = sum
        }
        return number
    }

    private func tooLarge() -> CourierError {
        CourierError(code: .bodyTooLarge, message: "a server-sent event of more than \(maxEventBytes) bytes")
    }
}
