import Courier
import Crypto
import NIOCore
import NIOHTTP1

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One request as the server saw it: head, and a body summary (the first bytes, length and SHA-256).
struct ServerRequest: Sendable {
    var head: HTTPRequestHead
    var body: ByteBuffer
    var bodyLength: Int
    var bodySHA256: String
    var path: String
    var query: [String: String]
    /// For `/multipart`: what `MultipartStreamParser` found, part by part, as JSON.
    var multipart: String?

    /// The first value of a request header.
    func header(_ name: String) -> String? { head.headers.first(name: name) }
    /// A query parameter as an integer.
    func int(_ name: String) -> Int? { query[name].flatMap(Int.init) }
}

/// Serves one connection: reads requests, routes each, and writes raw bytes back so any fault can be sent.
struct ConnectionHandler {
    /// The most body bytes kept for echoing; the rest is counted and hashed only.
    static let keptBodyBytes = 8 << 20
    let state: ServerState

    /// Serves an HTTP/1.1 connection, whose answers are raw bytes.
    func run(_ connection: NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>) async {
        state.serving(connection)
        try? await connection.executeThenClose { inbound, outbound in
            try await serve(inbound, writer: ResponseWriter(sink: .bytes(outbound), channel: connection.channel))
        }
    }

    /// Serves one HTTP/2 stream, whose answers are response parts (the routes that write malformed HTTP/1
    /// on purpose make no sense there).
    func run(stream: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
        try? await stream.executeThenClose { inbound, outbound in
            try await serve(inbound, writer: ResponseWriter(sink: .parts(outbound), channel: stream.channel))
            // The stream closes by itself once its END_STREAM has gone out; closing it sooner would reset it
            // (RST_STREAM CANCEL) while the end of the answer may still be queued.
            try await stream.channel.closeFuture.get()
        }
    }

    private func serve(
        _ inbound: NIOAsyncChannelInboundStream<HTTPServerRequestPart>,
        writer: ResponseWriter
    ) async throws {
        var head: HTTPRequestHead?
        var body = ByteBuffer()
        var length = 0
        var hasher = SHA256()
        var multipart: MultipartDigest?
        var cutAt: Int?
        var stopsReadingAt: Int?
        for try await part in inbound {
            switch part {
            case .head(let next):
                head = next
                body.clear()
                length = 0
                hasher = SHA256()
                let path = next.uri.prefix { $0 != "?" }
                multipart =
                    path == "/multipart"
                    ? MultipartDigest(
                        contentType: next.headers.first(name: "Content-Type"),
                        contentEncoding: next.headers.first(name: "Content-Encoding")
                    ) : nil
                cutAt = path == "/fault/cut-upload" ? Self.cutPoint(next) : nil
                stopsReadingAt = path == "/fault/stop-reading" ? Self.cutPoint(next) : nil
            case .body(var chunk):
                length += chunk.readableBytes
                state.add("request-bytes", chunk.readableBytes)
                chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
                multipart?.update(chunk)
                if body.readableBytes < Self.keptBodyBytes { body.writeBuffer(&chunk) }
                if let cutAt, length >= cutAt {
                    // The upload fault: count the attempt and close while the client is still sending.
                    _ = state.recordHit("/fault/cut-upload")
                    return
                }
                if let stopsReadingAt, length >= stopsReadingAt {
                    // A server that stops reading an upload and never answers: the connection's buffers fill and
                    // the client can write no more, until it gives up and closes (or the server shuts down).
                    _ = state.recordHit("/fault/stop-reading")
                    try? await Task.sleep(for: .seconds(60))
                    return
                }
            case .end:
                guard let requestHead = head else { continue }
                let components = URLComponents(string: requestHead.uri)
                var query: [String: String] = [:]
                for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
                let request = ServerRequest(
                    head: requestHead,
                    body: body,
                    bodyLength: length,
                    bodySHA256: Hex.string(hasher.finalize()),
                    path: components?.path ?? requestHead.uri,
                    query: query,
                    multipart: multipart?.summary()
                )
                state.recordHit(request.path)
                state.record(
                    SeenRequest(request.head, path: request.path, bodyLength: request.bodyLength, body: request.body)
                )
                let keepAlive =
                    request.path.hasPrefix("/ws/")
                    ? try await WebSocketRoute(state: state).respond(to: request, writer: writer)
                    : try await Routes(state: state).respond(to: request, writer: writer)
                try await writer.end()
                if !keepAlive || !requestHead.isKeepAlive { return }
            }
        }
    }
}

extension ConnectionHandler {
    /// Where `/fault/cut-upload?fraction=F` closes the connection (and `/fault/stop-reading` stops reading): after
    /// that fraction of the announced `Content-Length` (default a half), or after `?after=N` bytes for a body of
    /// unknown length.
    static func cutPoint(_ head: HTTPRequestHead) -> Int {
        let query = URLComponents(string: head.uri)?.queryItems ?? []
        if let after = query.first(where: { $0.name == "after" })?.value.flatMap(Int.init) { return after }
        let fraction = query.first(where: { $0.name == "fraction" })?.value.flatMap(Double.init) ?? 0.5
        let total = head.headers.first(name: "Content-Length").flatMap(Int.init) ?? 1 << 20
        return max(1, Int(Double(total) * fraction))
    }
}

/// Writes a response byte by byte as a route wants it, including the broken ones; on an HTTP/2 stream, as
/// response parts.
struct ResponseWriter {
    /// Where the answer goes.
    enum Sink {
        /// An HTTP/1.1 connection: the bytes as written.
        case bytes(NIOAsyncChannelOutboundWriter<ByteBuffer>)
        /// An HTTP/2 stream: a head, body parts and an end.
        case parts(NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>)
    }

    let sink: Sink
    let channel: any Channel

    /// Headers HTTP/2 forbids (RFC 9113 §8.2.2); an HTTP/2 stream leaves them out.
    private static let connectionSpecific: Set<String> = [
        "connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection",
    ]

    /// Writes `HTTP/1.1 status` and the headers as given (nothing added); `rawStatus` replaces the code's digits
    /// on HTTP/1.1 (`042`).
    func writeHead(
        status: Int,
        rawStatus: String? = nil,
        reason: String? = nil,
        headers: [(String, String)]
    ) async throws {
        switch sink {
        case .bytes(let outbound):
            let reason = reason ?? (rawStatus == nil ? HTTPResponseStatus(statusCode: status).reasonPhrase : "X")
            var text = "HTTP/1.1 \(rawStatus ?? String(status)) \(reason)\r\n"
            for (name, value) in headers { text += "\(name): \(value)\r\n" }
            text += "\r\n"
            try await outbound.write(ByteBuffer(string: text))
        case .parts(let outbound):
            let kept = headers.filter { !Self.connectionSpecific.contains($0.0.lowercased()) }
            try await outbound.write(
                .head(
                    HTTPResponseHead(
                        version: .http2,
                        status: HTTPResponseStatus(statusCode: status),
                        headers: HTTPHeaders(kept)
                    )
                )
            )
        }
    }

    /// Writes raw bytes (a body part on an HTTP/2 stream).
    func write(_ buffer: ByteBuffer) async throws {
        guard buffer.readableBytes > 0 else { return }
        switch sink {
        case .bytes(let outbound): try await outbound.write(buffer)
        case .parts(let outbound): try await outbound.write(.body(.byteBuffer(buffer)))
        }
    }

    /// Ends the answer: nothing to do on HTTP/1.1, where lengths and framing say it; the stream's end on HTTP/2.
    func end() async throws {
        if case .parts(let outbound) = sink { try await outbound.write(.end(nil)) }
    }

    /// A complete response with `Content-Length`.
    func respond(
        status: Int = 200,
        headers: [(String, String)] = [],
        body: ByteBuffer = ByteBuffer(),
        includeBody: Bool = true
    ) async throws {
        var all = headers
        if !all.contains(where: { $0.0.lowercased() == "content-length" }) {
            all.append(("Content-Length", String(body.readableBytes)))
        }
        try await writeHead(status: status, headers: all)
        if includeBody { try await write(body) }
    }

    /// A complete response with a text body.
    func respond(
        status: Int = 200,
        contentType: String = "text/plain; charset=utf-8",
        text: String,
        extraHeaders: [(String, String)] = []
    ) async throws {
        try await respond(
            status: status,
            headers: [("Content-Type", contentType)] + extraHeaders,
            body: ByteBuffer(string: text)
        )
    }

    /// Waits for `duration`; `false` as soon as the client closes the connection or the server shuts down. Woken
    /// by the close or a timer on the connection's loop, never by polling: a test waiting a minute costs nothing.
    func waitWhileConnected(for duration: Duration) async -> Bool {
        let loop = channel.eventLoop
        let outcome = loop.makePromise(of: Bool.self)  // a second completion is ignored: the first one counts
        let timer = loop.scheduleTask(in: TimeAmount(duration)) { outcome.succeed(true) }
        channel.closeFuture.whenComplete { _ in
            timer.cancel()
            outcome.succeed(false)
        }
        return await withTaskCancellationHandler {
            (try? await outcome.futureResult.get()) ?? false
        } onCancel: {
            loop.execute {
                timer.cancel()
                outcome.succeed(false)
            }
        }
    }

    /// Waits (up to five seconds) until everything written has left for the socket, so a fault that closes
    /// the connection after byte K really delivers K bytes first (closing drops writes still queued).
    func drain() async {
        let end = ContinuousClock.now + .seconds(5)
        while channel.isActive, ContinuousClock.now < end {
            guard let pending = try? await channel.getOption(.bufferedWritableBytes).get(), pending > 0 else { return }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Resets the connection (RST) instead of closing it politely.
    func reset() async {
        if let provider = channel as? any SocketOptionProvider {
            try? await provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
        }
        try? await channel.close()
    }
}
