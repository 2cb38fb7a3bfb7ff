import CompressNIO
import NIOCore

/// `/fault/...`: responses that break HTTP on purpose. Each returns whether the connection stays usable.
struct FaultRoutes {
    let request: ServerRequest
    let parts: [String]
    let writer: ResponseWriter

    private var argument: Int? { parts.count > 2 ? Int(parts[2]) : nil }

    func serve() async throws -> Bool {
        switch parts.count > 1 ? parts[1] : "" {
        case "close-at":
            // Promise `size` bytes, send the first K, then close (FIN).
            let size = request.int("size") ?? 64 * 1024
            let cut = min(argument ?? size / 2, size)
            try await writer.writeHead(
                status: 200,
                headers: [("Content-Type", "application/octet-stream"), ("Content-Length", String(size))]
            )
            try await writer.write(ByteBuffer(bytes: ServerFiles.bytes(offset: 0, count: cut)))
            return false
        case "reset":
            // Reset before any response, or after K body bytes of a promised megabyte.
            if let after = request.int("after") {
                try await writer.writeHead(
                    status: 200,
                    headers: [("Content-Type", "application/octet-stream"), ("Content-Length", String(1 << 20))]
                )
                try await writer.write(ByteBuffer(bytes: ServerFiles.bytes(offset: 0, count: after)))
                try await Task.sleep(for: .milliseconds(20))
            }
            await writer.reset()
            return false
        case "wrong-length":
            // Fewer bytes than promised, then close; or more (`claimed` < `actual`), and the connection kept open
            // so a client that reused it would read the surplus as its next response.
            let claimed = request.int("claimed") ?? 100
            let actual = request.int("actual") ?? 50
            try await writer.writeHead(
                status: 200,
                headers: [("Content-Type", "text/plain"), ("Content-Length", String(claimed))]
            )
            try await writer.write(ByteBuffer(bytes: ServerFiles.bytes(offset: 0, count: actual)))
            return actual > claimed
        case "bad-chunked":
            // `?kind=`: garbage where a size belongs (the default), bare LF line ends, a size that overflows 64 bits.
            let framing =
                switch request.query["kind"] {
                case "bare-lf": "5\nhello\n0\n\n"
                case "overflow": "1ffffffffffffffff0\r\nhello\r\n0\r\n\r\n"
                default: "5\r\nhello\r\nzz\r\nnot a chunk\r\n"
                }
            try await writer.writeHead(
                status: 200,
                headers: [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")]
            )
            try await writer.write(ByteBuffer(string: framing))
            return false
        case "two-lengths":
            try await writer.writeHead(
                status: 200,
                headers: [("Content-Type", "text/plain"), ("Content-Length", "5"), ("Content-Length", "11")]
            )
            try await writer.write(ByteBuffer(string: "hello world"))
            return false
        case "length-and-chunked":
            // A request-smuggling shape: the client must not trust either framing.
            try await writer.writeHead(
                status: 200,
                headers: [("Content-Type", "text/plain"), ("Content-Length", "3"), ("Transfer-Encoding", "chunked")]
            )
            try await writer.write(ByteBuffer(string: "5\r\nhello\r\n0\r\n\r\n"))
            return false
        case "stacked-gzip":
            // `Content-Encoding: gzip, gzip`: the JSON document compressed twice.
            var plain = ByteBuffer(string: ServerFiles.jsonDocument(items: 20))
            var once = try plain.compress(with: .gzip())
            let twice = try once.compress(with: .gzip())
            try await writer.respond(
                headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip, gzip")],
                body: twice
            )
            return true
        case "stall":
            // Stall before the head (`?at=head`), or after the head and some bytes (the default).
            if request.query["at"] != "head" {
                try await writer.writeHead(
                    status: 200,
                    headers: [("Content-Type", "application/octet-stream"), ("Content-Length", "1000")]
                )
                try await writer.write(ByteBuffer(bytes: ServerFiles.bytes(offset: 0, count: 10)))
            }
            try await Task.sleep(for: .seconds(3600))
            return false
        case "bad-gzip":
            let garbage = ByteBuffer(bytes: ServerFiles.bytes(offset: 7, count: 512))
            try await writer.respond(
                headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
                body: garbage
            )
            return false
        case "truncated-gzip":
            var plain = ByteBuffer(string: ServerFiles.jsonDocument(items: 50))
            let full = try plain.compress(with: .gzip())
            let cut = full.getSlice(at: full.readerIndex, length: full.readableBytes / 2) ?? full
            try await writer.respond(
                headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")],
                body: cut
            )
            return true
        case "gzip-members":
            // Two gzip members (RFC 1952 §2.2), then `?trailer=` bytes of garbage when asked.
            var first = ByteBuffer(string: "first member, ")
            var next = ByteBuffer(string: "second member")
            var body = try first.compress(with: .gzip())
            var second = try next.compress(with: .gzip())
            body.writeBuffer(&second)
            if let trailer = request.query["trailer"] { body.writeString(trailer) }
            try await writer.respond(
                headers: [("Content-Type", "text/plain"), ("Content-Encoding", "gzip")],
                body: body
            )
            return true
        case "deep-json":
            // `/fault/deep-json?depth=N`: a JSON array nested N deep, `[[[…1…]]]`.
            let depth = min(max(0, request.int("depth") ?? 1000), 10_000_000)
            var body = ByteBufferAllocator().buffer(capacity: 2 * depth + 1)
            body.writeRepeatingByte(UInt8(ascii: "["), count: depth)
            body.writeString("1")
            body.writeRepeatingByte(UInt8(ascii: "]"), count: depth)
            try await writer.respond(headers: [("Content-Type", "application/json")], body: body)
            return true
        case "bomb" where request.int("mib") != nil:
            // `/fault/bomb?mib=N[&prefix=K]`: K MiB of random bytes, then N MiB of zeros, gzip-compressed as one
            // member and then one member per MiB of zeros, sent as they are made.
            let prefix = try ServerFiles.randomMember(mebibytes: max(0, request.int("prefix") ?? 0))
            let zeros = try ServerFiles.zeroMember()
            let count = max(0, request.int("mib") ?? 0)
            try await writer.writeHead(
                status: 200,
                headers: [
                    ("Content-Type", request.query["type"] ?? "application/octet-stream"),
                    ("Content-Encoding", "gzip"),
                    ("Content-Length", String(prefix.readableBytes + count * zeros.readableBytes)),
                ]
            )
            if prefix.readableBytes > 0 { try await writer.write(prefix) }
            for _ in 0..<count { try await writer.write(zeros) }
            return true
        case "bomb":
            let body = try ServerFiles.zeroBomb()
            try await writer.respond(
                headers: [("Content-Type", "application/octet-stream"), ("Content-Encoding", "gzip")],
                body: body
            )
            return true
        case "status":
            // `/fault/status/CODE`: the status line `HTTP/1.1 CODE X` exactly as written (`042`, `000`), with a body.
            let code = parts.count > 2 ? parts[2] : "042"
            try await writer.writeHead(
                status: max(0, Int(code) ?? 0),
                rawStatus: code,
                headers: [("Content-Type", "text/plain"), ("Content-Length", "5")]
            )
            try await writer.write(ByteBuffer(string: "hello"))
            return true
        case "huge-header":
            let size = request.int("size") ?? 1 << 20
            try await writer.writeHead(
                status: 200,
                headers: [("X-Huge", String(repeating: "a", count: size)), ("Content-Length", "2")]
            )
            try await writer.write(ByteBuffer(string: "ok"))
            return false
        default:
            try await writer.respond(status: 404, text: "no fault named \(request.path)")
            return true
        }
    }
}
