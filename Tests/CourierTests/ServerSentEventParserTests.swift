import Foundation
import Testing

@testable import Courier

/// The event-stream parser against the WHATWG HTML standard's rules (§9.2.6) and its examples.
@Suite("Server-sent events: the parser")
struct ServerSentEventParserTests {
    /// Parses `chunks` as one stream and returns the events dispatched.
    func events(_ chunks: [String], maxEventBytes: Int = 1 << 20) throws -> [ServerSentEvent] {
        try events(chunks.map { Array($0.utf8) }, maxEventBytes: maxEventBytes)
    }

    func events(_ chunks: [[UInt8]], maxEventBytes: Int = 1 << 20) throws -> [ServerSentEvent] {
        var parser = ServerSentEventParser(maxEventBytes: maxEventBytes)
        var events: [ServerSentEvent] = []
        for chunk in chunks { try parser.parse(chunk, into: &events) }
        parser.finish()
        return events
    }

    @Test func multiLineDataIsJoinedByLineFeeds() throws {
        #expect(try events(["data: YHOO\ndata: +2\ndata: 10\n\n"]) == [ServerSentEvent(data: "YHOO\n+2\n10")])
    }

    /// The standard's example: comments, an `id`, an `id` without a value that clears it, one space dropped.
    @Test func theStandardsExampleStream() throws {
        let stream = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
        #expect(
            try events([stream]) == [
                ServerSentEvent(id: "1", data: "first event"),
                ServerSentEvent(id: "", data: "second event"),
                ServerSentEvent(id: "", data: " third event"),
            ]
        )
    }

    /// A field with no colon has an empty value; empty data still makes an event; an event with no data does not.
    @Test func emptyDataAndFieldsWithoutAColon() throws {
        #expect(
            try events(["data\n\ndata\ndata\n\ndata:"]) == [ServerSentEvent(data: ""), ServerSentEvent(data: "\n")]
        )
        #expect(
            try events(["data:test\n\ndata: test\n\n"]) == [
                ServerSentEvent(data: "test"), ServerSentEvent(data: "test"),
            ]
        )
        #expect(try events(["event: x\nid: 5\n\n"]).isEmpty, "no data, no event")
    }

    /// CRLF, LF and CR all end lines, in one stream, and a CRLF split across chunks is one line end.
    @Test func everyKindOfLineEndAlsoSplitAcrossChunks() throws {
        let stream = "data: a\r\ndata: b\rdata: c\n\r\nid: 7\r\revent: e\ndata: d\r\n\r\n"
        let expected = [ServerSentEvent(data: "a\nb\nc"), ServerSentEvent(id: "7", event: "e", data: "d")]
        let bytes = Array(stream.utf8)
        #expect(try events([bytes]) == expected)
        #expect(try events(bytes.map { [$0] }) == expected, "a byte at a time")
        for cut in 1..<bytes.count {
            #expect(try events([Array(bytes[..<cut]), Array(bytes[cut...])]) == expected, "cut at \(cut)")
        }
    }

    /// One byte-order mark at the very start is skipped, also split across chunks; a second is part of the text.
    @Test func oneByteOrderMarkAtTheStartOnly() throws {
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        let text = Array("data: x\n\n".utf8)
        #expect(try events([mark + text]) == [ServerSentEvent(data: "x")])
        #expect(try events([[0xEF], [0xBB, 0xBF] + text]) == [ServerSentEvent(data: "x")])
        #expect(try events([mark + mark + text]).isEmpty, "the second mark makes the field name \\u{FEFF}data")
        #expect(try events([[0xEF, 0xBB] + text]) == [], "a partial mark is text: the field is not data")
        #expect(try events([text + mark + text]) == [ServerSentEvent(data: "x")], "a mark mid-stream is not skipped")
    }

    /// The event type defaults to `message` and does not carry over; the last event ID does.
    @Test func typesResetAndIDsCarryOver() throws {
        let stream = "event: add\nid: 1\ndata: 1\n\ndata: 2\n\n"
        #expect(
            try events([stream]) == [
                ServerSentEvent(id: "1", event: "add", data: "1"),
                ServerSentEvent(id: "1", event: "message", data: "2"),
            ]
        )
    }

    /// An `id` holding NUL is ignored; the previous ID stands.
    @Test func anIDWithNULIsIgnored() throws {
        #expect(try events(["id: 3\ndata: a\n\nid: 4\u{0}5\ndata: b\n\n"]).map(\.id) == ["3", "3"])
    }

    /// `retry` takes ASCII digits only (no sign, no space, no overflow); it sets the reconnection time.
    @Test func retryTakesASCIIDigitsOnly() throws {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        try parser.parse(Array("retry: 1500\ndata: a\n\n".utf8), into: &events)
        #expect(parser.reconnectionTime == .milliseconds(1500))
        #expect(events.first?.retry == .milliseconds(1500))
        for ignored in [
            "retry: +5", "retry: 15a", "retry:", "retry:  7", "retry: 99999999999999999999999", "retry: -1",
        ] {
            try parser.parse(Array("\(ignored)\ndata: b\n\n".utf8), into: &events)
            #expect(parser.reconnectionTime == .milliseconds(1500), "\(ignored) is ignored")
            #expect(events.last?.retry == nil)
        }
        try parser.parse(Array("retry: 0\n\n".utf8), into: &events)
        #expect(parser.reconnectionTime == .zero, "zero is a valid time, and a retry alone dispatches nothing")
        #expect(events.count == 7)
    }

    /// An event cut off by the end of the stream is not dispatched; the next stream starts afresh but keeps the ID.
    @Test func anIncompleteEventIsDroppedAtTheEnd() throws {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        try parser.parse(Array("id: 9\ndata: whole\n\nevent: half\ndata: cut".utf8), into: &events)
        parser.finish()
        try parser.parse(Array("data: next\n\n".utf8), into: &events)
        #expect(events == [ServerSentEvent(id: "9", data: "whole"), ServerSentEvent(id: "9", data: "next")])
    }

    /// Unknown fields and comments are ignored; invalid UTF-8 becomes U+FFFD.
    @Test func unknownFieldsCommentsAndInvalidUTF8() throws {
        #expect(try events([": hi\nfoo: bar\nData: no\ndata: yes\n\n"]) == [ServerSentEvent(data: "yes")])
        #expect(
            try events([Array("data: a".utf8) + [0xFF] + Array("b\n\n".utf8)]) == [ServerSentEvent(data: "a\u{FFFD}b")]
        )
    }

    /// A line or an event past the limit throws instead of growing without bound.
    @Test func aLineOrEventPastTheLimitThrows() throws {
        let long = String(repeating: "x", count: 100)
        #expect(throws: CourierError.self) { try self.events(["data: \(long)"], maxEventBytes: 64) }
        let many = String(repeating: "data: 0123456789\n", count: 10)
        let error = #expect(throws: CourierError.self) { try self.events([many], maxEventBytes: 64) }
        #expect(error?.code == .bodyTooLarge)
        #expect(try events(["data: \(long)\n\n"], maxEventBytes: 128).count == 1)
    }

    /// JSON lines: LF or CRLF ends a line, split anywhere; the last line needs no line end; long lines throw.
    /// The last event ID is set when an event is dispatched: an `id` of an event cut off by the end of the stream
    /// is not what the next connection asks after; an `id` on an event without data still counts.
    @Test func theLastEventIDIsTheLastDispatchedOne() throws {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        try parser.parse(Array("id: 1\ndata: a\n\nid: 2\ndata: cut".utf8), into: &events)
        #expect(parser.lastEventID == "1")
        parser.finish()
        #expect(parser.lastEventID == "1")
        try parser.parse(Array("data: b\n\n".utf8), into: &events)
        #expect(events.map(\.id) == ["1", "1"])  // the cut event's id went with it
        try parser.parse(Array("id: 3\n\n".utf8), into: &events)
        #expect(parser.lastEventID == "3" && events.count == 2)
    }

    @Test func anIDPastItsLimitThrows() throws {
        var parser = ServerSentEventParser(maxIDBytes: 8)
        var events: [ServerSentEvent] = []
        try parser.parse(Array("id: 12345678\ndata: a\n\n".utf8), into: &events)
        let error = #expect(throws: CourierError.self) {
            try parser.parse(Array("id: 123456789\n".utf8), into: &events)
        }
        #expect(error?.code == .bodyTooLarge)
    }

    @Test func lineSplitterForJSONLines() throws {
        let bytes = Array("{\"n\":1}\r\n{\"n\":2}\n\n{\"n\":3}".utf8)
        for cut in 0...bytes.count {
            var splitter = LineSplitter(maxLineBytes: 100)
            var lines: [[UInt8]] = []
            try splitter.split(bytes[..<cut], into: &lines)
            try splitter.split(bytes[cut...], into: &lines)
            if let last = splitter.finish() { lines.append(last) }
            #expect(lines.map { String(decoding: $0, as: UTF8.self) } == ["{\"n\":1}", "{\"n\":2}", "", "{\"n\":3}"])
        }
        var splitter = LineSplitter(maxLineBytes: 4)
        var lines: [[UInt8]] = []
        #expect(throws: CourierError.self) { try splitter.split(Array("12345".utf8), into: &lines) }
    }
}
