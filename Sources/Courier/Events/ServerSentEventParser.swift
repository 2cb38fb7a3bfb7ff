/// The event-stream parser of the WHATWG HTML standard (§9.2.6), fed chunk by chunk as they arrive: a pure value,
/// so every rule is tested without a connection.
///
/// - UTF-8, one byte-order mark at the very start of the stream skipped; invalid bytes become U+FFFD.
/// - Lines end with CRLF, LF or CR, also when the two bytes of a CRLF arrive in different chunks.
/// - A line starting with a colon is a comment. A line without a colon is a field with an empty value. One space
///   after the colon is not part of the value.
/// - `data` lines are joined by line feeds; `event` sets the type; `id` sets the last event ID buffer unless its
///   value holds NUL; `retry` sets the reconnection time when its value is ASCII digits only; other fields are
///   ignored.
/// - At a blank line the buffer becomes the last event ID string, and an event is dispatched when it has data.
///   A stream that ends mid-event drops the incomplete event, its `id` included (``finish()`` only forgets it), so
///   a reconnection asks for what follows the last event that was whole.
///
/// A hostile server cannot make it hold more than `maxEventBytes` (the line being read and the event's data
/// together) or an id of more than `maxIDBytes`: past either it throws ``CourierError/Code/bodyTooLarge``.
package struct ServerSentEventParser {
    /// The last event ID string, set when an event is dispatched: it outlives the connection, and a reconnection
    /// sends it.
    private(set) var lastEventID = ""
    /// The last event ID buffer: what the latest `id` field set, which becomes ``lastEventID`` at the next blank
    /// line.
    private var lastEventIDBuffer = ""
    /// The reconnection time of the latest valid `retry` field, if any.
    private(set) var reconnectionTime: Duration?

    private let maxEventBytes: Int
    private let maxIDBytes: Int
    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var eventType = ""
    private var previousEventType = ""
    private var previousEventTypeBytes: [UInt8] = []
    private var retryOfEvent: Duration?
    /// The stream's first bytes matched against the byte-order mark so far; `nil` once past it.
    private var byteOrderMarkMatched: Int? = 0
    /// The previous chunk ended with CR: a LF starting this one completes that CRLF, not a blank line.
    private var afterCR = false

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")

    package init(maxEventBytes: Int = 16 << 20, maxIDBytes: Int = 4096) {
        self.maxEventBytes = max(1, maxEventBytes)
        self.maxIDBytes = max(1, maxIDBytes)
    }

    /// Starts from `lastEventID`, as a stream resumed from an earlier one does.
    mutating func resume(from lastEventID: String) {
        self.lastEventID = lastEventID
        lastEventIDBuffer = lastEventID
    }

    /// Parses `bytes`, the next part of the stream, appending the events it completes to `events`.
    mutating func parse(_ bytes: some Collection<UInt8>, into events: inout [ServerSentEvent]) throws(CourierError) {
        do {
            try Array(bytes).withUnsafeBytes { try parse($0, into: &events) }
        } catch {
            throw CourierError.normalized(error)  // the parser's own error: withUnsafeBytes only rethrows it
        }
    }

    /// Parses `buffer`, the next part of the stream (a chunk as it arrived), appending the events it completes to
    /// `events`. A line that lies within the chunk is read where it is; only one split across chunks is copied.
    package mutating func parse(
        _ buffer: UnsafeRawBufferPointer,
        into events: inout [ServerSentEvent]
    )
        throws(CourierError)
    {
        var index = 0
        while index < buffer.count, let matched = byteOrderMarkMatched {
            if buffer[index] == Self.byteOrderMark[matched] {
                byteOrderMarkMatched = matched + 1 == Self.byteOrderMark.count ? nil : matched + 1
                index += 1
            } else {
                // Not a byte-order mark after all: the bytes taken so far were text.
                line.append(contentsOf: Self.byteOrderMark[..<matched])
                byteOrderMarkMatched = nil
            }
        }
        while index < buffer.count {
            if afterCR {
                afterCR = false
                if buffer[index] == Self.lineFeed {  // the LF of a CRLF split across chunks
                    index += 1
                    continue
                }
            }
            var end = index
            while end < buffer.count, buffer[end] != Self.lineFeed, buffer[end] != Self.carriageReturn { end += 1 }
            let text = UnsafeRawBufferPointer(rebasing: buffer[index..<end])
            guard end < buffer.count else {  // the line goes on in the next chunk
                line.append(contentsOf: text)
                if line.count + data.count > maxEventBytes { throw tooLarge() }
                return
            }
            afterCR = buffer[end] == Self.carriageReturn
            index = end + 1
            if line.isEmpty {
                if text.count + data.count > maxEventBytes { throw tooLarge() }
                try endLine(text, into: &events)
            } else {
                line.append(contentsOf: text)
                if line.count + data.count > maxEventBytes { throw tooLarge() }
                var whole: [UInt8] = []
                swap(&whole, &line)
                defer {
                    whole.removeAll(keepingCapacity: true)
                    swap(&whole, &line)
                }
                do {
                    try whole.withUnsafeBytes { try endLine($0, into: &events) }
                } catch {
                    throw CourierError.normalized(error)  // endLine's own error: withUnsafeBytes only rethrows it
                }
            }
        }
    }

    /// The stream ended (or the connection dropped): the line and the event in progress are dropped, as the
    /// standard says, and the next stream starts afresh. The last event ID of the last dispatched event and the
    /// reconnection time stay; an `id` of the event that never completed goes with it.
    mutating func finish() {
        lastEventIDBuffer = lastEventID
        line.removeAll(keepingCapacity: true)
        data.removeAll(keepingCapacity: true)
        hasData = false
        eventType = ""
        retryOfEvent = nil
        byteOrderMarkMatched = 0
        afterCR = false
    }

    private mutating func endLine(
        _ line: UnsafeRawBufferPointer,
        into events: inout [ServerSentEvent]
    )
        throws(CourierError)
    {
        guard let first = line.first else { return dispatch(into: &events) }
        guard first != UInt8(ascii: ":") else { return }  // a comment
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        var valueStart = colon == line.endIndex ? colon : colon + 1
        if valueStart < line.endIndex, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
        let value = UnsafeRawBufferPointer(rebasing: line[valueStart...])
        if Self.matches(name, "data") {
            if hasData { data.append(UInt8(ascii: "\n")) }
            data.append(contentsOf: value)
            hasData = true
            if data.count > maxEventBytes { throw tooLarge() }
        } else if Self.matches(name, "event") {
            // Most streams name few types: the previous one is kept rather than made again.
            if !previousEventTypeBytes.withUnsafeBytes({ $0.elementsEqual(value) }) {
                previousEventTypeBytes = Array(value)
                previousEventType = String(decoding: value, as: UTF8.self)
            }
            eventType = previousEventType
        } else if Self.matches(name, "id"), !value.contains(0) {
            guard value.count <= maxIDBytes else {
                throw CourierError(
                    code: .bodyTooLarge,
                    message: "a server-sent event id of more than \(maxIDBytes) bytes"
                )
            }
            lastEventIDBuffer = String(decoding: value, as: UTF8.self)
        } else if Self.matches(name, "retry"), let milliseconds = Self.digits(value) {
            reconnectionTime = .milliseconds(milliseconds)
            retryOfEvent = reconnectionTime
        }
        // Anything else is an unknown field, an id holding NUL or a retry that is not digits: ignored.
    }

    private mutating func dispatch(into events: inout [ServerSentEvent]) {
        lastEventID = lastEventIDBuffer  // even when no event goes out: the standard's step 1 of dispatching
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

    /// Whether `bytes` are the ASCII of `name` (a field name), compared byte by byte without making a string.
    private static func matches(_ bytes: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        let expected = name.utf8Start
        for index in 0..<bytes.count where bytes[index] != expected[index] { return false }
        return true
    }

    /// The value as a base-ten number when it is ASCII digits only and fits an `Int64`.
    private static func digits(_ value: UnsafeRawBufferPointer) -> Int64? {
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
