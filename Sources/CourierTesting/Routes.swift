import CompressNIO
import Courier
import Crypto
import NIOCore
import NIOHTTP1

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The routes of ``TestServer``. Each returns whether the connection may serve another request.
struct Routes {
    let state: ServerState

    func respond(to request: ServerRequest, writer: ResponseWriter) async throws -> Bool {
        var parts = request.path.split(separator: "/").map(String.init)
        // A leading API version (`/v2/users/1`) is skipped, as a versioned API would route it.
        if let first = parts.first, first.count > 1, first.first == "v", first.dropFirst().allSatisfy(\.isNumber) {
            parts.removeFirst()
        }
        let isHead = request.head.method == .HEAD
        switch parts.first ?? "" {
        case "echo": try await echo(request, writer)
        case "small":
            try await writer.respond(
                headers: [("Content-Type", "text/plain")],
                body: ServerFiles.small,
                includeBody: !isHead
            )
        case "status":
            let code = parts.count > 1 ? Int(parts[1]) ?? 200 : 200
            var headers: [(String, String)] = [("Content-Type", "text/plain")]
            if let retryAfter = request.query["retry-after"] { headers.append(("Retry-After", retryAfter)) }
            let body =
                (100..<200).contains(code) || code == 204 || code == 304
                ? ByteBuffer() : ByteBuffer(string: "status \(code)")
            try await writer.respond(status: code, headers: headers, body: body, includeBody: !isHead)
        case "delay", "slow":  // `/slow`, the README's slow endpoint, is a delay of a minute
            let ms = parts[0] == "slow" ? 60_000 : parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            guard await writer.waitWhileConnected(for: .milliseconds(ms)) else {
                state.recordAbort(request.path)
                return false
            }
            try await writer.respond(text: "waited \(ms) ms")
        case "users": try await user(request, parts, writer)
        case "login":
            // The README's chain: a token for the `user` of a JSON body, which `/me` then reads back.
            let fields = try? JSONDecoder().decode(
                [String: ParameterValue].self,
                from: Data(request.body.readableBytesView)
            )
            let name = fields?["user"].flatMap { if case .string(let name) = $0 { name } else { nil } } ?? "guest"
            try await writer.respond(contentType: "application/json", text: "{\"jwt\":\"jwt-\(name)\"}")
        case "me":
            let name = request.header("authorization").flatMap { $0.split(separator: "-", maxSplits: 1).last } ?? ""
            guard request.header("authorization")?.hasPrefix("Bearer jwt-") == true else {
                try await writer.respond(status: 401, text: "no token")
                return true
            }
            try await writer.respond(contentType: "application/json", text: "{\"id\":1,\"name\":\"\(name)\"}")
        case "flaky":
            let key = parts.count > 1 ? parts[1] : "default"
            let count = state.increment(key)
            if count <= request.int("failures") ?? 2 {
                // `delay` (ms) holds a failure back, so identical requests can join its call first
                if let delay = request.int("delay") { try await Task.sleep(for: .milliseconds(delay)) }
                var headers: [(String, String)] = []
                if let retryAfter = request.query["retry-after"] { headers.append(("Retry-After", retryAfter)) }
                try await writer.respond(
                    status: request.int("status") ?? 503,
                    contentType: "text/plain",
                    text: "failure \(count)",
                    extraHeaders: headers
                )
            } else {
                try await writer.respond(text: "ok after \(count - 1) failures")
            }
        case "redirect": try await redirect(request, parts, writer)
        case "redirect-loop": try await writer.respond(status: 302, headers: [("Location", "/redirect-loop-b")])
        case "redirect-loop-b": try await writer.respond(status: 302, headers: [("Location", "/redirect-loop")])
        case "redirect-to":
            try await writer.respond(
                status: request.int("status") ?? 302,
                headers: [("Location", request.query["url"] ?? "/echo")]
            )
        case "gzip", "deflate": try await compressed(parts[0], writer)
        case "bytes":
            let count = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            try await bytes(
                count: count,
                chunked: request.query["chunked"] != nil,
                writer: writer,
                includeBody: !isHead
            )
        case "file": return try await FileRoute(request: request, parts: parts, state: state, writer: writer).serve()
        case "drip": try await drip(request, writer)
        case "json": try await json(request, writer)
        case "cache": try await CacheRoute(request: request, state: state, writer: writer).serve()
        case "set-cookies":
            // One cookie per query pair (Path=/), except `location`, which turns the answer into a 302 there.
            let cookies = request.query.filter { $0.key != "location" }.sorted { $0.key < $1.key }.map {
                ("Set-Cookie", "\($0.key)=\($0.value); Path=/")
            }
            let location = request.query["location"].map { [("Location", $0)] } ?? []
            try await writer.respond(
                status: location.isEmpty ? 200 : 302,
                headers: cookies + location,
                body: ByteBuffer(string: "{}")
            )
        case "set-cookie-lines":
            // Each query value as a Set-Cookie line as it is, in the order of their numeric keys (`1=…&2=…`).
            let lines = request.query.compactMap { key, value in Int(key).map { ($0, value) } }.sorted { $0.0 < $1.0 }
            try await writer.respond(headers: lines.map { ("Set-Cookie", $0.1) }, body: ByteBuffer(string: "{}"))
        case "response-headers":
            // Each query pair a header of the answer, but `_status`, its status (200 by default).
            let headers = request.query.filter { $0.key != "_status" }.sorted { $0.key < $1.key }.map {
                ($0.key, $0.value)
            }
            try await writer.respond(
                status: request.int("_status") ?? 200,
                headers: headers,
                body: ByteBuffer(string: "{}")
            )
        case "multipart":
            try await writer.respond(
                contentType: "application/json",
                text: request.multipart ?? "{\"error\":\"not multipart\"}"
            )
        case "fault": return try await FaultRoutes(request: request, parts: parts, writer: writer).serve()
        case "events": return try await EventRoutes(request: request, state: state, writer: writer).events()
        case "jsonl": return try await EventRoutes(request: request, state: state, writer: writer).jsonLines()
        case "auth": try await auth(request, parts, writer)
        default: try await writer.respond(status: 404, text: "no route for \(request.path)")
        }
        return true
    }

    /// `/auth/…`: a bearer token that expires. `/auth/resource` answers 200 to `Authorization: Bearer token-N`
    /// where N is the current generation (0 at first), else 401; `/auth/refresh` starts the next generation and
    /// answers its token as `{"access_token": "token-N"}`; `/auth/refuse-all` answers 401 to everything.
    private func auth(_ request: ServerRequest, _ parts: [String], _ writer: ResponseWriter) async throws {
        let challenge = [("WWW-Authenticate", "Bearer realm=\"courier\"")]
        switch parts.count > 1 ? parts[1] : "" {
        case "refresh":
            state.add("auth-generation", 1)
            try await writer.respond(
                contentType: "application/json",
                text: "{\"access_token\":\"token-\(state.counter("auth-generation"))\"}"
            )
        case "resource" where request.header("authorization") == "Bearer token-\(state.counter("auth-generation"))":
            try await writer.respond(text: "ok")
        default:
            try await writer.respond(status: 401, text: "refused", extraHeaders: challenge)
        }
    }

    private func echo(_ request: ServerRequest, _ writer: ResponseWriter) async throws {
        var headers: [String: [String]] = [:]
        for (name, value) in request.head.headers { headers[name.lowercased(), default: []].append(value) }
        var object: [String: ParameterValue] = [
            "method": .string(request.head.method.rawValue),
            "path": .string(request.path),
            "uri": .string(request.head.uri),
            "query": .object(request.query.mapValues(ParameterValue.string)),
            "headers": .object(headers.mapValues { .array($0.map(ParameterValue.string)) }),
            // larger: length and hash only
            "body": .string(request.bodyLength <= 64 * 1024 ? String(buffer: request.body) : ""),
            "bodyLength": .int(request.bodyLength),
            "bodySHA256": .string(request.bodySHA256),
        ]
        // A compressed request body (kept whole up to 8 MiB) is decoded, so a test can check what was meant.
        if let coding = request.header("Content-Encoding"), request.bodyLength <= ConnectionHandler.keptBodyBytes {
            var body = request.body
            let algorithm: CompressionAlgorithm? = coding == "gzip" ? .gzip() : coding == "deflate" ? .zlib() : nil
            if let algorithm, let decoded = try? body.decompress(with: algorithm) {
                object["decodedLength"] = .int(decoded.readableBytes)
                object["decodedSHA256"] = .string(Hex.string(SHA256.hash(data: Data(decoded.readableBytesView))))
            } else {
                object["decodedLength"] = .int(-1)  // not a valid body in that coding
            }
        }
        let data = try JSONEncoder.sorted.encode(object)
        try await writer.respond(
            headers: [("Content-Type", "application/json")],
            body: ByteBuffer(bytes: data),
            includeBody: request.head.method != .HEAD
        )
    }

    private func redirect(_ request: ServerRequest, _ parts: [String], _ writer: ResponseWriter) async throws {
        let remaining = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
        let status = request.int("status") ?? 302
        if remaining <= 0 {
            try await echo(request, writer)
        } else {
            let query = request.head.uri.split(separator: "?", maxSplits: 1).dropFirst().first.map { "?" + $0 } ?? ""
            try await writer.respond(status: status, headers: [("Location", "/redirect/\(remaining - 1)\(query)")])
        }
    }

    private func compressed(_ kind: String, _ writer: ResponseWriter) async throws {
        var plain = ByteBuffer(string: ServerFiles.jsonDocument(items: 200))
        let body = try plain.compress(with: kind == "gzip" ? .gzip() : .zlib())
        try await writer.respond(
            headers: [("Content-Type", "application/json"), ("Content-Encoding", kind)],
            body: body
        )
    }

    private func bytes(count: Int, chunked: Bool, writer: ResponseWriter, includeBody: Bool) async throws {
        let chunkSize = 64 * 1024
        if chunked {
            try await writer.writeHead(
                status: 200,
                headers: [("Content-Type", "application/octet-stream"), ("Transfer-Encoding", "chunked")]
            )
            var offset = 0
            while offset < count {
                let size = min(chunkSize, count - offset)
                var frame = ByteBuffer(string: String(size, radix: 16) + "\r\n")
                frame.writeBytes(ServerFiles.bytes(offset: offset, count: size))
                frame.writeString("\r\n")
                try await writer.write(frame)
                offset += size
            }
            try await writer.write(ByteBuffer(string: "0\r\n\r\n"))
        } else {
            try await writer.writeHead(
                status: 200,
                headers: [("Content-Type", "application/octet-stream"), ("Content-Length", String(count))]
            )
            guard includeBody else { return }
            var offset = 0
            while offset < count {
                let size = min(chunkSize, count - offset)
                try await writer.write(ByteBuffer(bytes: ServerFiles.bytes(offset: offset, count: size)))
                offset += size
            }
        }
    }

    private func drip(_ request: ServerRequest, _ writer: ResponseWriter) async throws {
        let size = request.int("size") ?? 10
        let chunk = max(1, request.int("chunk") ?? 1)
        let interval = request.int("interval") ?? 100
        try await writer.writeHead(
            status: 200,
            headers: [("Content-Type", "application/octet-stream"), ("Content-Length", String(size))]
        )
        var offset = 0
        while offset < size {
            let count = min(chunk, size - offset)
            do {
                try await writer.write(ByteBuffer(bytes: ServerFiles.bytes(offset: offset, count: count)))
            } catch {
                state.recordAbort(request.path)  // the client closed the connection while a part was going out
                throw error
            }
            state.add("drip-parts", 1)
            offset += count
            if offset < size, await !writer.waitWhileConnected(for: .milliseconds(interval)) {
                state.recordAbort(request.path)  // the client closed the connection before the whole body
                return
            }
        }
    }

    /// `/users/ID`: the user as JSON, `{"id":ID,"name":"user ID"}`; a PATCH or PUT with a JSON object sets the
    /// fields it names (except `id`) in the answer. The user API the README's examples talk to.
    private func user(_ request: ServerRequest, _ parts: [String], _ writer: ResponseWriter) async throws {
        if parts.count == 1 {  // `/users`: the first three
            let list = (1...3).map { ["id": ParameterValue.int($0), "name": .string("user \($0)")] }
            let json = try JSONEncoder.sorted.encode(list)
            try await writer.respond(headers: [("Content-Type", "application/json")], body: ByteBuffer(bytes: json))
            return
        }
        guard parts.count == 2, let id = Int(parts[1]) else {
            try await writer.respond(status: 404, text: "no such user")
            return
        }
        var user: [String: ParameterValue] = ["id": .int(id), "name": .string("user \(id)")]
        if request.head.method == .PATCH || request.head.method == .PUT,
            let fields = try? JSONDecoder().decode(
                [String: ParameterValue].self,
                from: Data(request.body.readableBytesView)
            )
        {
            user.merge(fields.filter { $0.key != "id" }) { $1 }
        }
        let json = try JSONEncoder.sorted.encode(user)
        try await writer.respond(headers: [("Content-Type", "application/json")], body: ByteBuffer(bytes: json))
    }

    private func json(_ request: ServerRequest, _ writer: ResponseWriter) async throws {
        let etag = "\"json-\(request.query["version"] ?? "1")\""
        var headers: [(String, String)] = [
            ("Content-Type", "application/json"), ("ETag", etag),
            ("Last-Modified", "Sat, 21 Nov 2026 12:00:00 GMT"),
        ]
        if let maxAge = request.query["max-age"] { headers.append(("Cache-Control", "max-age=\(maxAge)")) }
        if let cacheControl = request.query["cache-control"] { headers.append(("Cache-Control", cacheControl)) }
        if request.header("If-None-Match") == etag {
            try await writer.respond(status: 304, headers: headers)
            return
        }
        let hit = state.hits(request.path)
        try await writer.respond(
            headers: headers,
            body: ByteBuffer(string: "{\"id\":1,\"name\":\"courier\",\"served\":\(hit)}")
        )
    }
}
