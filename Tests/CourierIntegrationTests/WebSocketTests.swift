import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import InMemoryTracing
import NIOCore
import Testing
import Tracing

@Suite("WebSockets through the session, against the loopback server's /ws endpoints")
struct WebSocketTests {
    /// Sends `messages` to `/ws/echo` and returns what came back.
    private func echo(
        _ session: Session,
        _ messages: [WebSocketMessage],
        path: String = "/ws/echo",
        options: WebSocketOptions = .init()
    ) async throws -> (answers: [WebSocketMessage], compressed: Bool) {
        try await session.webSocket(.get(path), options: options) { socket in
            var answers: [WebSocketMessage] = []
            for message in messages { try await socket.send(message) }
            for try await answer in socket {
                answers.append(answer)
                if answers.count == messages.count { break }
            }
            return (answers, socket.isCompressed)
        }
    }

    @Test func textAndBinaryMessagesComeBackWholeAndTheCloseIsNormal() async throws {
        try await withServerSession { session, server in
            var big = ByteBuffer()
            big.writeRepeatingByte(7, count: 300_000)  // five fragments of 64 KiB each way
            let messages: [WebSocketMessage] = [
                .text("héllo"), .binary(ByteBuffer(bytes: [0, 1, 2])), .binary(big), .text(""),
            ]
            let (answers, compressed) = try await echo(session, messages)
            #expect(answers == messages && !compressed)
            #expect(server.counter("ws-open:/ws/echo") == 1 && server.counter("ws-messages:/ws/echo") == 4)
            #expect(server.counter("ws-client-close:/ws/echo") == 1000, "closed with 1000 when the body returned")
            let handshake = try #require(server.requests("/ws/echo").first)
            #expect(handshake.header("upgrade") == "websocket" && handshake.header("sec-websocket-version") == "13")
        }
    }

    @Test func permessageDeflateIsNegotiatedAndMessagesRoundTrip() async throws {
        try await withServerSession { session, _ in
            var options = WebSocketOptions()
            options.compression = true
            let repeated = String(repeating: "compress me ", count: 20_000)
            let messages: [WebSocketMessage] = [
                .text(repeated), .text("short"), .text(repeated), .binary(ByteBuffer(string: "b")),
                .text(""),  // an empty message after others: zlib has nothing to flush, and it is ordinary
            ]
            let (answers, compressed) = try await echo(session, messages, options: options)
            #expect(compressed && answers == messages)
            // A server that declines leaves messages uncompressed.
            let (plain, declined) = try await echo(session, [.text("x")], path: "/ws/echo?deflate=0", options: options)
            #expect(!declined && plain == [.text("x")])
        }
    }

    /// A sender faster than the event loop: its messages go out in batches (one flush after the writes queued
    /// meanwhile), and each arrives once, in order, with and without compression.
    @Test(arguments: [false, true])
    func aBurstOfMessagesSentWhileReadingComesBackInOrder(compressed: Bool) async throws {
        try await withServerSession { session, server in
            var options = WebSocketOptions()
            options.compression = compressed
            let count = 2_000
            let answers = try await session.webSocket(.get("/ws/echo"), options: options) { socket in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { for index in 0..<count { try await socket.send("message \(index)") } }
                    var answers: [WebSocketMessage] = []
                    for try await answer in socket {
                        answers.append(answer)
                        if answers.count == count { break }
                    }
                    try await group.waitForAll()
                    return answers
                }
            }
            #expect(answers == (0..<count).map { .text("message \($0)") })
            #expect(server.counter("ws-messages:/ws/echo") == count)
        }
    }

    @Test func theServersCloseEndsTheSequenceWithItsCodeAndIsAnswered() async throws {
        try await withServerSession { session, server in
            let closed = try await session.webSocket(.get("/ws/close?code=4000&reason=bye")) { socket in
                for try await message in socket { Issue.record("unexpected \(message)") }
                return socket.closed
            }
            #expect(closed == WebSocketClose(code: WebSocketCloseCode(rawValue: 4000), reason: "bye", byServer: true))
            #expect(server.counter("ws-client-close:/ws/close") == 4000, "Courier echoed the code")
        }
    }

    @Test func theCallerClosesWithItsOwnCodeAndSendingAfterwardsFails() async throws {
        try await withServerSession { session, server in
            try await session.webSocket(.get("/ws/echo")) { socket in
                try await socket.close(WebSocketCloseCode(rawValue: 4100), reason: "done here")
                let closing = await courierError { try await socket.send("after close") }
                #expect(closing?.code == .connectionClosed)
                for try await _ in socket {}
                #expect(socket.closed?.code.rawValue == 4100 && socket.closed?.byServer == false)
                let error = await courierError { try await socket.send("late") }
                #expect(error?.code == .connectionClosed)
                let invalid = await courierError { try await socket.close(.abnormalClosure) }
                #expect(invalid?.code == .invalidParameter)
            }
            #expect(server.counter("ws-client-close:/ws/echo") == 4100)
        }
    }

    @Test(arguments: [
        ("oversize", UInt16(1009)), ("long-message", 1009), ("bad-utf8", 1007), ("masked", 1002),
        ("big-control", 1002), ("reserved-bits", 1002), ("rsv1", 1002), ("bad-close-code", 1002),
        ("storm", 1008), ("reserved-opcode", 1002), ("fragmented-control", 1002), ("bad-deflate", 1007),
    ])
    func aHostileServerEndsTheConnectionWithTheRightCode(kind: String, code: UInt16) async throws {
        try await withServerSession { session, server in
            var options = WebSocketOptions()
            options.compression = kind == "bad-deflate"
            let error = await courierError {
                try await session.webSocket(.get("/ws/hostile?kind=\(kind)"), options: options) { socket in
                    for try await _ in socket {}
                }
            }
            #expect(error?.code == .webSocket, "\(kind): \(String(describing: error))")
            #expect(error?.webSocketCloseCode?.rawValue == code, "\(kind)")
            // The server heard Courier's close frame with that code before the connection ended.
            await eventually("the server counted ws-client-close:\(kind)") {
                server.counter("ws-client-close:\(kind)") == Int(code)
            }
        }
    }

    @Test func aDroppedConnectionIsATypedErrorWithoutReconnection() async throws {
        try await withServerSession { session, _ in
            let error = await courierError {
                try await session.webSocket(.get("/ws/hostile?kind=drop")) { socket in
                    for try await _ in socket {}
                }
            }
            #expect(error?.code == .connectionClosed && error?.webSocketCloseCode == .abnormalClosure)
        }
    }

    @Test func anUnansweredPingEndsTheConnection() async throws {
        try await withServerSession { session, server in
            var options = WebSocketOptions()
            options.keepAlive = .init(interval: .milliseconds(100), timeout: .milliseconds(200))
            let error = await courierError {
                try await session.webSocket(.get("/ws/silent"), options: options) { socket in
                    for try await _ in socket {}
                }
            }
            #expect(error?.code == .timeout && error?.webSocketCloseCode == .goingAway)
            await eventually("the server counted ws-client-close:/ws/silent") {
                server.counter("ws-client-close:/ws/silent") == 1001
            }
            // A server that answers keeps the connection open through many pings (a generous timeout: a loaded
            // machine may answer late, and this part checks the pongs count, not their speed).
            options.keepAlive = .init(interval: .milliseconds(100), timeout: .seconds(10))
            let answers = try await session.webSocket(.get("/ws/echo"), options: options) { socket in
                try await Task.sleep(for: .milliseconds(600))
                try await socket.send("still here")
                for try await answer in socket { return Optional(answer) }
                return nil
            }
            #expect(answers == .text("still here"))
        }
    }

    @Test(arguments: [true, false])
    func framesThatCameWithThe101AndTheServersEndAreDelivered(withClose: Bool) async throws {
        try await withServerSession { session, _ in
            for _ in 0..<20 {
                var received: [WebSocketMessage] = []
                var closed: WebSocketClose?
                var error: CourierError?
                do {
                    try await session.webSocket(.get("/ws/burst?close=\(withClose ? 1 : 0)")) { socket in
                        defer { closed = socket.closed }
                        for try await message in socket { received.append(message) }
                    }
                } catch let failure as CourierError {
                    error = failure
                }
                #expect(received == [.text("hello")], "the message sent with the 101")
                if withClose {
                    #expect(error == nil && closed?.code == .normalClosure && closed?.reason == "bye")
                } else {
                    #expect(error?.code == .connectionClosed && error?.webSocketCloseCode == .abnormalClosure)
                }
            }
        }
    }

    @Test func aMessageHalfReceivedWhenTheCallerClosesIsStillDelivered() async throws {
        try await withServerSession { session, server in
            let received = try await session.webSocket(.get("/ws/fragment-across-close")) { socket in
                var received: [WebSocketMessage] = []
                for try await message in socket {
                    received.append(message)
                    // "ready" came in the read that brought the message's first fragment.
                    if message == .text("ready") { try await socket.close() }
                }
                #expect(socket.closed?.code == .normalClosure)
                return received
            }
            #expect(received == [.text("ready"), .text("half and the rest")])
            #expect(server.counter("ws-client-close:/ws/fragment-across-close") == 1000, "no protocol error")
        }
    }

    /// A Location in the handshake's own scheme (`ws://`) is followed as an `http://` one is (it was "an invalid
    /// location").
    @Test func aRedirectToAWebSocketURLIsFollowed() async throws {
        try await withServerSession { session, server in
            let to = "ws://127.0.0.1:\(server.port)/ws/echo"
            let answer = try await session.webSocket(.get("/ws/redirect?to=\(to)")) { socket in
                try await socket.send("redirected")
                for try await message in socket { return Optional(message) }
                return nil
            }
            #expect(answer == .text("redirected") && server.counter("ws-open:/ws/echo") == 1)
        }
    }

    @Test func aRefusedHandshakeIsAnHTTPStatusWithItsBody() async throws {
        try await withServerSession { session, _ in
            let refused = await courierError { try await session.webSocket(.get("/ws/status/403")) { _ in } }
            #expect(refused?.code == .httpStatus && refused?.status == .forbidden)
            #expect(refused?.bodyPreview == "refused with 403")
            let ignored = await courierError { try await session.webSocket(.get("/ws/ignore")) { _ in } }
            #expect(ignored?.code == .invalidResponse)
            let badAccept = await courierError { try await session.webSocket(.get("/ws/bad-accept")) { _ in } }
            #expect(badAccept?.code == .invalidResponse && badAccept?.message.contains("Sec-WebSocket-Accept") == true)
            let notGET = await courierError { try await session.webSocket(.post("/ws/echo")) { _ in } }
            #expect(notGET?.code == .invalidParameter)
        }
    }

    @Test func aRedirectIsFollowedToTheSocketAndItsSpanIsTheCallsChild() async throws {
        let tracer = InMemoryTracer()
        try await withServerSession({ $0.tracer = tracer }) { session, server in
            let (answers, _) = try await echo(session, [.text("moved")], path: "/ws/redirect")
            #expect(answers == [.text("moved")] && server.counter("ws-open:/ws/echo") == 1)
            let spans = tracer.finishedSpans
            #expect(spans.count == 2, "the call and its redirected handshake")
            let call = try #require(spans.last)
            let hop = try #require(spans.first)
            #expect(hop.spanContext.parentSpanID == call.spanContext.spanID)
            #expect(hop.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
            #expect(call.attributes["http.response.status_code"]?.toSpanAttribute() == 101)
        }
    }

    @Test func aRefusedCredentialIsRefreshedOnceAndTheHandshakeSentAgain() async throws {
        let refreshes = Locked(0)
        let holder = SessionHolder()
        try await withServerSession({ configuration in
            configuration.authentication = Authentication(
                LateTokenAuthenticator(holder: holder, refreshes: refreshes, failure: nil),
                credential: "stale"
            )
        }) { session, server in
            holder.session.withLock { $0 = session }
            let (answers, _) = try await echo(session, [.text("signed")], path: "/ws/auth")
            #expect(answers == [.text("signed")])
            #expect(refreshes.withLock { $0 } == 1)
            #expect(
                server.requests("/ws/auth").map { $0.header("authorization") } == ["Bearer stale", "Bearer token-1"]
            )
        }
    }

    @Test func theSessionsHeadersCookiesAndBaseURLGoWithTheHandshake() async throws {
        try await withServerSession({ configuration in
            configuration.defaultHeaders[HTTPField.Name("X-App")!] = "courier"
            configuration.cookieJar = try? CookieJar()
        }) { session, server in
            _ = try await echo(session, [.text("a")], path: "/ws/echo?cookie=seen%3Dyes")
            _ = try await echo(
                session,
                [.text("b")],
                path: server.url("/ws/echo").absoluteString.replacing("http://", with: "ws://")
            )
            let handshakes = server.requests("/ws/echo")
            #expect(handshakes.count == 2 && handshakes.allSatisfy { $0.header("x-app") == "courier" })
            #expect(
                handshakes.last?.header("cookie") == "seen=yes",
                "the cookie the 101 set went with the next handshake"
            )
        }
    }

    @Test func theConnectionIsInThePoolAndTheCancelByIDOrTagClosesIt() async throws {
        try await withServerSession { session, server in
            for byTag in [false, true] {
                let error = await courierError {
                    try await session.webSocket(.get("/ws/echo").tag("chat")) { socket in
                        let listed = await session.pool.snapshot()
                        #expect(listed.count == 1 && listed.first?.tag == "chat" && listed.first?.state == .running)
                        if byTag {
                            #expect(await session.pool.cancelAll(tag: "chat") == 1)
                        } else if let id = listed.first?.id {
                            #expect(await session.pool.cancel(id))
                        }
                        for try await _ in socket {}
                    }
                }
                #expect(error?.code == .cancelled)
                #expect(await session.pool.snapshot().isEmpty)
            }
            await eventually("the server counted ws-client-close:/ws/echo") {
                server.counter("ws-client-close:/ws/echo") == 2 * 1001
            }
        }
    }

    @Test func cancellingTheTaskClosesTheConnection() async throws {
        try await withServerSession { session, server in
            let open = Locked(false)
            let task = Task {
                try await session.webSocket(.get("/ws/echo")) { socket in
                    open.withLock { $0 = true }
                    for try await _ in socket {}
                }
            }
            await eventually("the connection is open") { open.withLock { $0 } }
            task.cancel()
            let result = await task.result
            #expect((try? result.get()) == nil)
            await eventually("the server counted ws-client-close:/ws/echo") {
                server.counter("ws-client-close:/ws/echo") == 1001
            }
            #expect(await session.pool.snapshot().isEmpty)
        }
    }

    @Test func aDroppedConnectionReconnectsUnderTheRetryRuleAndTheCallerSeesEachDrop() async throws {
        try await withServerSession({ $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10)) }) {
            session,
            server in
            var options = WebSocketOptions()
            options.reconnects = true
            let seen = Locked<[(number: Int, drop: CourierError.Code?)]>([])
            let result = try await session.webSocket(.get("/ws/drop?after=1"), options: options) { socket in
                seen.withLock { $0.append((socket.connectionNumber, socket.previousDrop?.code)) }
                if socket.connectionNumber == 4 { return "done on the fourth" }
                try await socket.send("resubscribe \(socket.connectionNumber)")
                for try await _ in socket {}
                return "never"
            }
            #expect(result == "done on the fourth")
            let numbers = seen.withLock { $0 }
            #expect(numbers.map(\.number) == [1, 2, 3, 4])
            #expect(numbers.dropFirst().allSatisfy { $0.drop == .connectionClosed })
            #expect(server.counter("ws-open:/ws/drop") == 4, "each drop counted anew: three in a row never reached")
            #expect(server.counter("ws-messages:/ws/drop") == 3, "nothing re-sent that the body did not send")

            // A server closing with 1012 (service restart) is a drop too; with 1000 it is the end.
            let restarts = try await session.webSocket(.get("/ws/drop?after=1&code=1012"), options: options) { socket in
                if socket.connectionNumber == 2 { return 2 }
                try await socket.send("x")
                for try await _ in socket {}
                return socket.connectionNumber
            }
            #expect(restarts == 2)
        }
    }

    @Test func reconnectionStopsWhenTheRuleSaysSo() async throws {
        let monitor = FinishedCalls()
        try await withServerSession({
            $0.retryPolicy = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(10))
            $0.monitors = [monitor]
        }) {
            session,
            server in
            var options = WebSocketOptions()
            options.reconnects = true
            let error = await courierError {
                try await session.webSocket(.get("/ws/hostile?kind=drop"), options: options) { socket in
                    for try await _ in socket {}
                }
            }
            #expect(error?.code == .connectionClosed)
            #expect(server.counter("ws-open:/ws/hostile") == 2, "the rule's two attempts in a row")
            #expect(monitor.attempts == [2], "the monitors hear the call once, with both handshakes")
        }
    }
}

/// The attempts of each call the monitors heard end.
private final class FinishedCalls: EventMonitor {
    private let seen = Locked<[Int]>([])
    var attempts: [Int] { seen.withLock { $0 } }
    func didFinish(with message: DebugMessage) { seen.withLock { $0.append(message.attempts) } }
}
