import NIOCore
import NIOHTTP1

/// `/file/N`: an N-byte entity with an ETag and Last-Modified that honours `Range` (one range), `If-Range`
/// and answers 416 with `bytes */N`. `?etag=X` changes the entity tag (a changed file), `?rate=B` throttles
/// each connection to B bytes per second, `?no-ranges` makes the server ignore `Range`.
struct FileRoute {
    let request: ServerRequest
    let parts: [String]
    let writer: ResponseWriter

    static let lastModified = "Sat, 21 Nov 2026 12:00:00 GMT"

    func serve() async throws {
        let size = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        let etag = "\"file-\(size)-\(request.query["etag"] ?? "v1")\""
        var headers: [(String, String)] = [("Content-Type", "application/octet-stream"), ("ETag", etag),
                                           ("Last-Modified", Self.lastModified)]
        let honoursRanges = request.query["no-ranges"] == nil
        if honoursRanges { headers.append(("Accept-Ranges", "bytes")) }

        var range = 0..<size
        var status = 200
        if honoursRanges, let header = request.header("Range"), ifRangeMatches(etag: etag) {
            switch Self.parse(range: header, size: size) {
            case .some(let requested):
                range = requested
                status = 206
                headers.append(("Content-Range", "bytes \(requested.lowerBound)-\(requested.upperBound - 1)/\(size)"))
            case .none:
                try await writer.respond(status: 416, headers: [("Content-Range", "bytes */\(size)")])
                return
            }
        }
        headers.append(("Content-Length", String(range.count)))
        try await writer.writeHead(status: status, headers: headers)
        guard request.head.method != .HEAD else { return }
        try await send(range, rate: request.int("rate"))
    }

    private func ifRangeMatches(etag: String) -> Bool {
        guard let ifRange = request.header("If-Range") else { return true }
        return ifRange == etag || ifRange == Self.lastModified
    }

    private func send(_ range: Range<Int>, rate: Int?) async throws {
        let chunk = rate.map { max(1, min(64 * 1024, $0 / 10)) } ?? 64 * 1024
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = min(chunk, range.upperBound - offset)
            try await writer.write(ByteBuffer(bytes: ServerFiles.bytes(offset: offset, count: count)))
            offset += count
            if let rate, rate > 0 { try await Task.sleep(for: .milliseconds(count * 1000 / rate)) }
        }
    }

    /// `bytes=a-b`, `bytes=a-` or `bytes=-n` within `size`; `nil` when unsatisfiable or malformed.
    static func parse(range header: String, size: Int) -> Range<Int>? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst("bytes=".count).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        if spec[0].isEmpty {
            guard let suffix = Int(spec[1]), suffix > 0, size > 0 else { return nil }
            return max(0, size - suffix)..<size
        }
        guard let start = Int(spec[0]), start < size, start >= 0 else { return nil }
        let end = spec[1].isEmpty ? size - 1 : min(Int(spec[1]) ?? -1, size - 1)
        guard end >= start else { return nil }
        return start..<(end + 1)
    }
}
