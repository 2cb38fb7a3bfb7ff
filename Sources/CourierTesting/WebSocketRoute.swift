import Courier
import Crypto
import NIOCore
import NIOSSL
import NIOWebSocket

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `/ws/…`: the server's WebSocket endpoint. An upgrade request to one of these paths is answered with a 101 and
/// the connection then speaks RFC 6455 from the server's side; an ordinary request gets 426.
///
/// - `/ws/echo`: sends each message back (inflated and deflated again with permessage-deflate, which it accepts
///   when offered unless `?deflate=0`); answers pings; answers a close with the same code and closes. With
///   `?delay=MS` each message goes back MS milliseconds after it came, unless the client has closed by then.
/// - `/ws/close?code=C&reason=R`: closes at once with that code (default 1000) and reason.
/// - `/ws/hostile?kind=K`: sends one frame a client must refuse, then waits for the client's close and counts its
///   code as `ws-client-close:K`: `oversize` (a frame announcing 64 MiB), `long-message` (fragments past 2 MiB),
///   `bad-utf8`, `masked`, `big-control` (a 126-byte ping), `reserved-bits` (RSV2), `rsv1` (without deflate),
///   `bad-close-code` (1005), `storm` (10,000 empty fragments), `reserved-opcode` (3), `fragmented-control`,
///   `bad-deflate` (RSV1 on bytes that are not deflate), `drop` (the connection closed without a close frame).
/// - `/ws/silent`: echoes messages but answers no ping.
/// - `/ws/flood?count=N&size=S`: sends N binary messages of S bytes, then closes with 1000.
/// - `/ws/drop?after=N`: echoes N messages, then drops the connection; `?code=C` closes with C instead.
/// - `/ws/burst`: the 101, a text message "hello" and a close frame (1000, "bye") in one write, then the
///   connection closed; `?close=0` leaves out the close frame.
/// - `/ws/fragment-across-close`: sends "ready" and the first fragment of a message, and the message's last
///   fragment after the client's close, before its answer.
/// - `/ws/auth`: 401 unless `Authorization: Bearer token-N` names `/auth/…`'s current generation.
/// - `/ws/status/NNN`: answers the handshake with that status; `/ws/ignore`: with 200; `/ws/bad-accept`: a 101
///   with the wrong `Sec-WebSocket-Accept`; `/ws/redirect`: 302 to `/ws/echo` (or to `?to=URL`).
///
/// Every 101 counts `ws-open:PATH`; each message received counts `ws-messages:PATH`; a `?cookie=name=value`
/// comes back as `Set-Cookie`; `?protocol=P` chooses that subprotocol (else the first offered).
struct WebSocketRoute {
    let state: ServerState

    /// Answers the upgrade request `request`; returns once the WebSocket connection has ended (`false`: the
    /// connection is done), or at once when the handshake was refused (`true`: it may serve another request).
    func respond(to request: ServerRequest, writer: ResponseWriter) async throws -> Bool {
        let parts = request.path.split(separator: "/").map(String.init)
        let name = parts.count > 1 ? parts[1] : ""
        guard request.header("upgrade")?.lowercased() == "websocket", let key = request.header("sec-websocket-key")
        else {
            try await writer.respond(
                status: 426,
                text: "upgrade to websocket",
                extraHeaders: [("Upgrade", "websocket")]
            )
            return true
        }
        guard case .bytes = writer.sink else {
            try await writer.respond(status: 400, text: "no WebSocket over HTTP/2")
            return true
        }
        switch name {
        case "status":
            let code = parts.count > 2 ? Int(parts[2]) ?? 400 : 400
            try await writer.respond(status: code, text: "refused with \(code)")
            return true
        case "ignore":
            try await writer.respond(text: "not a websocket")
            return true
        case "redirect":
            try await writer.respond(status: 302, headers: [("Location", request.query["to"] ?? "/ws/echo")])
            return true
        case "auth" where request.header("authorization") != "Bearer token-\(state.counter("auth-generation"))":
            try await writer.respond(
                status: 401,
                text: "refused",
                extraHeaders: [("WWW-Authenticate", "Bearer realm=\"courier\"")]
            )
            return true
        default:
            break
        }
        let offersDeflate =
            request.header("sec-websocket-extensions")?.lowercased().contains("permessage-deflate") == true
        let deflates = offersDeflate && request.query["deflate"] != "0"
        var headers: [(String, String)] = [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Accept", name == "bad-accept" ? "AAAA" : Self.accept(for: key)),
        ]
        if deflates { headers.append(("Sec-WebSocket-Extensions", "permessage-deflate")) }
        let offered = request.header("sec-websocket-protocol")?.split(separator: ",").map { $0.trimmingSpaces() }
        if let chosen = request.query["protocol"] ?? offered?.first {
            headers.append(("Sec-WebSocket-Protocol", chosen))
        }
        if let cookie = request.query["cookie"] { headers.append(("Set-Cookie", cookie)) }
        let head = "HTTP/1.1 101 Switching Protocols\r\n" + headers.map { "\($0): \($1)\r\n" }.joined() + "\r\n"
        state.add("ws-open:\(request.path)", 1)
        let (path, query, state) = (request.path, request.query, self.state)
        let channel = writer.channel
        // The 101 and the switch happen in one turn of the loop, so no frame can reach the HTTP decoder.
        if name == "burst" {
            // What some servers do on accepting and closing at once: everything in one segment, then the FIN.
            var bytes = ByteBuffer(string: head)
            var message = TestWebSocketHandler.frame(opcode: 0x1, payload: ByteBuffer(string: "hello"))
            bytes.writeBuffer(&message)
            if query["close"] != "0" {
                var payload = ByteBuffer()
                payload.writeInteger(UInt16(1000))
                payload.writeString("bye")
                var close = TestWebSocketHandler.frame(opcode: 0x8, payload: payload)
                bytes.writeBuffer(&close)
            }
            try? await channel.writeAndFlush(bytes)
            try? await channel.close()
            return false
        }
        try await channel.eventLoop.submit {
            let pipeline = channel.pipeline.syncOperations
            channel.writeAndFlush(ByteBuffer(string: head), promise: nil)
            let position: ChannelPipeline.SynchronousOperations.Position =
                if let tls = try? pipeline.handler(type: NIOSSLServerHandler.self) { .after(tls) } else { .first }
            let handler = try TestWebSocketHandler(
                TestWebSocketHandler.Behaviour(name: name, query: query),
                echoDelay: query["delay"].flatMap(Int64.init).map(TimeAmount.milliseconds),
                path: path,
                deflates: deflates,
                state: state
            )
            // The decoder first: the handler starts sending as it is added, and a read that its flush brings in
            // must meet the decoder (`addHandlers` at `.first` adds the last handler first).
            let decoder = ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: 1 << 26))
            try pipeline.addHandler(decoder, position: position)
            try pipeline.addHandler(handler, position: .after(decoder))
        }.get()
        try? await channel.closeFuture.get()
        return false
    }

    /// base64(SHA-1(key + RFC 6455's GUID)).
    static func accept(for key: String) -> String {
        Data(Insecure.SHA1.hash(data: Data((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
            .base64EncodedString()
    }
}
