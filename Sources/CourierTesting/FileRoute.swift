import NIOCore
import NIOHTTP1

/// `/file/N`: an N-byte entity with an ETag and Last-Modified that honours `Range` (one range), `If-Range`
/// and answers 416 with `bytes */N`. Every request is numbered per `key` (default: the path), which the fault
/// options below use; the bytes sent are counted in the counter `file-bytes:KEY`.
///
/// Query options:
/// - `etag=X`: another entity tag; `change-after=N`: the tag changes (`v2`) from request N+1 on.
/// - `no-validators`: send neither `ETag` nor `Last-Modified` (a server that gives a resume nothing to check).
/// - `rate=B`: at most B bytes per second per connection.
/// - `no-ranges`: ignore `Range`; `no-ranges-after=N`: from request N+1 on.
/// - `cut=K`: send at most K body bytes per response, then close (FIN); `reset=K`: the same with RST;
///   `faults=N` limits either to the first N requests.
/// - `stall-at=K`: go silent after K body bytes of the first `faults` (default 1) requests.
/// - `bad-range-after=N`: from request N+1 on, a 206 names a range one byte later than it was asked for.
/// - `short-after=N`: from request N+1 on, a 206's Content-Length is one byte shorter than its Content-Range.
/// - `huge-range-after=N`: from request N+1 on, a 206 names `bytes A-9223372036854775807/*`, a last byte whose
///   successor overflows 64 bits.
/// - `disposition=V`: sends `Content-Disposition: V`; `cache-control=V` sends `Cache-Control: V`.
/// - `auth`: answers 401 unless `Authorization: Bearer token-N` names the current generation of `/auth/…`'s
///   token; `expire-on-cut`: a response that is cut also expires that token, as a token that runs out mid-download.
struct FileRoute {
    let request: ServerRequest
    let parts: [String]
    let state: ServerState
    let writer: ResponseWriter

    static let lastModified = "Sat, 21 Nov 2026 12:00:00 GMT"

    /// Serves the file; returns whether the connection stays usable.
    func serve() async throws -> Bool {
        let size = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        let key = request.query["key"] ?? request.path
        if request.query["auth"] != nil,
            request.header("authorization") != "Bearer token-\(state.counter("auth-generation"))"
        {
            try await writer.respond(
                status: 401,
                headers: [("WWW-Authenticate", "Bearer realm=\"courier\"")],
                body: ByteBuffer(string: "refused")
            )
            return true
        }
        let number = state.increment("file:" + key)
        func after(_ option: String) -> Bool { request.int(option).map { number > $0 } ?? false }

        let version = after("change-after") ? "v2" : request.query["etag"] ?? "v1"
        let etag = "\"file-\(size)-\(version)\""
        var headers: [(String, String)] = [("Content-Type", "application/octet-stream")]
        if request.query["no-validators"] == nil { headers += [("ETag", etag), ("Last-Modified", Self.lastModified)] }
        if let disposition = request.query["disposition"] { headers.append(("Content-Disposition", disposition)) }
        if let cacheControl = request.query["cache-control"] { headers.append(("Cache-Control", cacheControl)) }
        let honoursRanges = request.query["no-ranges"] == nil && !after("no-ranges-after")
        if honoursRanges { headers.append(("Accept-Ranges", "bytes")) }

        var range = 0..<size
        var status = 200
        var declared = size
        if honoursRanges, let header = request.header("Range"), ifRangeMatches(etag: etag) {
            guard let requested = Self.parse(range: header, size: size) else {
                try await writer.respond(status: 416, headers: [("Content-Range", "bytes */\(size)")])
                return true
            }
            range = requested
            status = 206
            declared = requested.count - (after("short-after") ? 1 : 0)
            let shift = after("bad-range-after") ? 1 : 0
            let contentRange =
                after("huge-range-after")
                ? "bytes \(requested.lowerBound)-\(Int64.max)/*"
                : "bytes \(requested.lowerBound + shift)-\(requested.upperBound - 1 + shift)/\(size)"
            headers.append(("Content-Range", contentRange))
        }
        headers.append(("Content-Length", String(declared)))
        try await writer.writeHead(status: status, headers: headers)
        guard request.head.method != .HEAD else { return true }

        let faulty = number <= request.int("faults") ?? Int.max
        let cut = faulty ? request.int("cut") ?? request.int("reset") : nil
        let stallAt = number <= request.int("faults") ?? 1 ? request.int("stall-at") : nil
        let end = range.lowerBound + min(declared, cut ?? declared, stallAt ?? declared)
        try await send(range.lowerBound..<end, rate: request.int("rate"), key: key)
        if end == range.lowerBound + declared { return true }
        await writer.drain()
        if request.query["expire-on-cut"] != nil { state.add("auth-generation", 1) }
        if stallAt != nil {
            _ = await writer.waitWhileConnected(for: .seconds(3600))
        } else if request.int("reset") != nil {
            await writer.reset()
        }
        return false
    }

    private func ifRangeMatches(etag: String) -> Bool {
        guard let ifRange = request.header("If-Range") else { return true }
        return ifRange == etag || ifRange == Self.lastModified
    }

    private func send(_ range: Range<Int>, rate: Int?, key: String) async throws {
        let chunk = rate.map { max(1, min(64 * 1024, $0 / 10)) } ?? 64 * 1024
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = min(chunk, range.upperBound - offset)
            try await writer.write(ServerFiles.buffer(offset: offset, count: count))
            state.add("file-bytes:" + key, count)
            offset += count
            if let rate, rate > 0 { try await Task.sleep(for: .milliseconds(count * 1000 / rate)) }
        }
    }

    /// `bytes=a-b`, `bytes=a-` or `bytes=-n` within `size`; `nil` when unsatisfiable or malformed.
    static func parse(range header: String, size: Int) -> Range<Int>? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst("bytes=".count).split(
            separator: "-",
            maxSplits: 1,
            omittingEmptySubsequences: false
        )
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
