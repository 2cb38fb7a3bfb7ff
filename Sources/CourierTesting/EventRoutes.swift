import CompressNIO
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `/events` and `/jsonl`: streams that arrive piece by piece, for server-sent events and JSON lines.
///
/// `/events?count=N` sends events `1…N`, each `id: I`, `event: tick` and `data: {"n":I}`, in chunked encoding,
/// starting after the request's `Last-Event-ID`; a request whose `Last-Event-ID` is already N gets 204, the
/// standard's way to stop a client reconnecting. Options:
/// - `drop-after=K`: the connection is cut (no chunked terminator) after K events of this connection (0: before
///   the first, after the comment and `retry`);
/// - `silent-after=K`: after K events of this connection, nothing more is sent, and the connection stays open until
///   the client closes it (a server gone quiet);
/// - `retry=MS`: a `retry: MS` field first;
/// - `interval=MS`: a pause before each event (the route notices a closed connection during it);
/// - `count=0`: events without end;
/// - `piece=B`: the stream written B bytes at a time, so lines and CRLFs are split across chunks;
/// - `crlf`: lines end with CRLF instead of LF;
/// - `cut-mid-event`: before a `drop-after` cut, an event that never completes (`id: 1000I` and a data line,
///   no blank line);
/// - `id-once`: only the first event has an `id` line, and it names the last event (`id: N`);
/// - `resumed-id-last`: on a request with a `Last-Event-ID`, only the last event (`N`) has an `id` line, so the
///   others take the last event ID the client kept;
/// - `pad=B`: each event's data is `{"n":I}` followed by B spaces (a large event);
/// - `hostile`: before the first event, one whose id, type and data hold terminal control sequences (ESC, C1
///   CSI, an OSC 52 clipboard write).
///
/// The counter `events-open` is how many `/events` answers are being written now, `events-sent` how many events
/// went out in all.
///
/// `/jsonl?count=N&piece=B` sends `{"n":1}` … `{"n":N}`, one per line, as `application/jsonl`, the last line
/// without its line feed; `gzip` compresses the whole before it is cut into pieces.
struct EventRoutes {
    let request: ServerRequest
    let state: ServerState
    let writer: ResponseWriter

    /// Answers `/events`; returns whether the connection may serve another request.
    func events() async throws -> Bool {
        let count = request.int("count") ?? 10
        let start = request.header("last-event-id").flatMap { Int($0) } ?? 0
        if count > 0, start >= count {
            try await writer.respond(status: 204, headers: [])
            return true
        }
        state.add("events-open", 1)
        defer { state.add("events-open", -1) }
        try await writer.writeHead(
            status: 200,
            headers: [
                ("Content-Type", "text/event-stream"), ("Cache-Control", "no-store"), ("Transfer-Encoding", "chunked"),
            ]
        )
        let end = request.query["crlf"] != nil ? "\r\n" : "\n"
        var pending = ": a comment the client ignores\(end)"
        if let retry = request.int("retry") { pending += "retry: \(retry)\(end)" }
        let dropAfter = request.int("drop-after")
        if dropAfter == 0 {  // cut before the first event: a connection that brings none
            guard try await send(Array(pending.utf8)) else { return false }
            await writer.drain()
            try? await writer.channel.close()
            return false
        }
        var sent = 0
        var id = start + 1
        while count == 0 || id <= count {
            if let interval = request.int("interval"), await !writer.waitWhileConnected(for: .milliseconds(interval)) {
                return false
            }
            pending += eventText(id: id, first: sent == 0 && id == start + 1, end: end)
            guard try await send(Array(pending.utf8)) else { return false }
            pending = ""
            state.add("events-sent", 1)
            sent += 1
            id += 1
            if let silentAfter = request.int("silent-after"), sent >= silentAfter, count == 0 || id <= count {
                while await writer.waitWhileConnected(for: .milliseconds(100)) {}
                return false
            }
            if let dropAfter, sent >= dropAfter, count == 0 || id <= count {
                if request.query["cut-mid-event"] != nil {
                    _ = try await send(Array("id: \(1000 + id)\(end)data: never completed\(end)".utf8))
                }
                await writer.drain()
                try? await writer.channel.close()
                return false
            }
        }
        try await writer.write(ByteBuffer(string: "0\r\n\r\n"))
        return true
    }

    /// Answers `/jsonl`.
    func jsonLines() async throws -> Bool {
        let count = request.int("count") ?? 10
        var headers = [("Content-Type", "application/jsonl"), ("Transfer-Encoding", "chunked")]
        var body = ByteBuffer(string: (1...max(1, count)).map { "{\"n\":\($0)}" }.joined(separator: "\n"))
        if request.query["gzip"] != nil {
            body = try body.compress(with: .gzip())
            headers.append(("Content-Encoding", "gzip"))
        }
        try await writer.writeHead(status: 200, headers: headers)
        guard try await send(Array(body.readableBytesView)) else { return false }
        try await writer.write(ByteBuffer(string: "0\r\n\r\n"))
        return true
    }

    /// The text of event `id` as the query asks for it.
    private func eventText(id: Int, first: Bool, end: String) -> String {
        var hostile = ""
        if first, request.query["hostile"] != nil {
            hostile =
                "id: \u{1B}]52;c;cHduZWQ=\u{7}\(end)event: \u{1B}[2J\(end)data: \u{9B}31mred\u{1B}]0;title\u{7}\(end)\(end)"
        }
        let count = request.int("count") ?? 10  // as `events()` reads it
        let idLine: String
        if request.query["id-once"] != nil {
            idLine = first ? "id: \(count)\(end)" : ""
        } else if request.query["resumed-id-last"] != nil, request.header("last-event-id") != nil, id != count {
            idLine = ""
        } else {
            idLine = "id: \(id)\(end)"
        }
        let padding = String(repeating: " ", count: max(0, min(request.int("pad") ?? 0, 64 << 20)))
        return "\(hostile)\(idLine)event: tick\(end)data: {\"n\":\(id)}\(padding)\(end)\(end)"
    }

    /// Writes `bytes` as chunks of `piece` bytes (all at once without it); `false` when the client has gone.
    private func send(_ bytes: [UInt8]) async throws -> Bool {
        let piece = max(1, request.int("piece") ?? bytes.count)
        var offset = 0
        while offset < bytes.count {
            let part = bytes[offset..<min(bytes.count, offset + piece)]
            var frame = ByteBuffer(string: String(part.count, radix: 16) + "\r\n")
            frame.writeBytes(part)
            frame.writeString("\r\n")
            do {
                try await writer.write(frame)
            } catch {
                return false
            }
            offset += part.count
        }
        return true
    }
}
