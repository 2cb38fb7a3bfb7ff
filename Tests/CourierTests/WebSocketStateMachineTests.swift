import NIOCore
import NIOWebSocket
import Testing

@testable import Courier

@Suite("The WebSocket machine, frame by frame: messages, control frames, closes and every hostile frame")
struct WebSocketStateMachineTests {
    func machine(maxMessageBytes: Int = 16, maxFragments: Int = 4, compression: Bool = false) -> WebSocketStateMachine {
        WebSocketStateMachine(maxMessageBytes: maxMessageBytes, maxFragments: maxFragments, compression: compression)
    }

    func frame(
        _ opcode: WebSocketOpcode,
        _ text: String = "",
        fin: Bool = true,
        rsv1: Bool = false,
        rsv2: Bool = false,
        masked: Bool = false
    ) -> WebSocketFrame {
        WebSocketFrame(
            fin: fin,
            rsv1: rsv1,
            rsv2: rsv2,
            opcode: opcode,
            maskKey: masked ? WebSocketMaskingKey([1, 2, 3, 4]) : nil,
            data: ByteBuffer(string: text)
        )
    }

    func close(_ code: UInt16?, reason: String = "") -> WebSocketFrame {
        var payload = ByteBuffer()
        if let code { payload.writeInteger(code) }
        payload.writeString(reason)
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: payload)
    }

    /// The close code of a failure, or nil when `action` is not one.
    func failureCode(_ action: WebSocketStateMachine.Action) -> WebSocketCloseCode? {
        if case .fail(let failure) = action { failure.closeCode } else { nil }
    }

    @Test func aWholeMessageIsDeliveredAndFragmentsAreJoined() {
        var machine = machine()
        #expect(
            machine.received(frame(.text, "hello")) == .deliver(.text, ByteBuffer(string: "hello"), compressed: false)
        )
        #expect(machine.received(frame(.binary, "ab", fin: false)) == .none)
        #expect(machine.received(frame(.continuation, "cd", fin: false)) == .none)
        #expect(
            machine.received(frame(.continuation, "e"))
                == .deliver(.binary, ByteBuffer(string: "abcde"), compressed: false)
        )
    }

    @Test func pingsAreAnsweredAndPongsAnswerTheKeepAlive() {
        var machine = machine()
        #expect(machine.received(frame(.ping, "p")) == .pong(ByteBuffer(string: "p")))
        guard case .ping(var payload) = machine.keepAliveTick(now: Tick(.seconds(10)), timeout: .seconds(5)) else {
            Issue.record("no ping")
            return
        }
        #expect(machine.keepAliveTick(now: Tick(.seconds(12)), timeout: .seconds(5)) == .none)  // waiting for the pong
        let number = payload.readInteger(as: UInt64.self)
        var pong = ByteBuffer()
        pong.writeInteger(number ?? 0)
        #expect(machine.received(WebSocketFrame(fin: true, opcode: .pong, data: pong)) == .none)
        guard case .ping = machine.keepAliveTick(now: Tick(.seconds(20)), timeout: .seconds(5)) else {
            Issue.record("the pong did not count")
            return
        }
        let late = machine.keepAliveTick(now: Tick(.seconds(26)), timeout: .seconds(5))
        #expect(failureCode(late) == .goingAway)
        if case .fail(let failure) = late { #expect(failure.error.code == .timeout && failure.sendsClose) }
    }

    @Test func theServersCloseIsAnsweredWithItsCode() {
        var machine = machine()
        let action = machine.received(close(4000, reason: "bye"))
        #expect(
            action
                == .replyClose(WebSocketClose(code: WebSocketCloseCode(rawValue: 4000), reason: "bye", byServer: true))
        )
        #expect(!machine.isOpen)
        #expect(machine.connectionEnded() == nil, "a closing handshake, not a drop")
        var empty = self.machine()
        #expect(empty.received(close(nil)) == .replyClose(WebSocketClose(code: .noStatusReceived, byServer: true)))
    }

    @Test func theCallersCloseWaitsForTheServersAnswer() {
        var machine = machine()
        #expect(machine.close(.normalClosure, reason: "done") == .sendClose(.normalClosure, reason: "done"))
        #expect(machine.close(.normalClosure, reason: "again") == .none)
        #expect(
            machine.received(frame(.text, "late")) == .deliver(.text, ByteBuffer(string: "late"), compressed: false),
            "what the server sent before it read our close still arrives"
        )
        #expect(machine.received(frame(.ping)) == .none)
        let answered = machine.received(close(1000))
        #expect(answered == .closeAnswered(WebSocketClose(code: .normalClosure, reason: "done", byServer: false)))
    }

    @Test func aConnectionEndingBeforeTheHandshakeIsADrop() {
        var machine = machine()
        guard let failure = machine.connectionEnded() else {
            Issue.record("no failure")
            return
        }
        #expect(failure.closeCode == .abnormalClosure && !failure.sendsClose && failure.error.code == .connectionClosed)
        #expect(machine.connectionEnded() == nil)
    }

    @Test(arguments: [
        ("masked", WebSocketCloseCode.protocolError),
        ("rsv2", .protocolError),
        ("rsv1 without deflate", .protocolError),
        ("reserved opcode", .protocolError),
        ("continuation first", .protocolError),
        ("new message mid-message", .protocolError),
        ("fragmented ping", .protocolError),
        ("close code 1005", .protocolError),
        ("close code 999", .protocolError),
        ("one-byte close", .protocolError),
        ("close reason not UTF-8", .invalidFramePayloadData),
        ("too long", .messageTooBig),
        ("too long in fragments", .messageTooBig),
        ("too many fragments", .policyViolation),
    ])
    func everyHostileFrameFailsWithItsCode(kind: String, code: WebSocketCloseCode) {
        var machine = machine()
        var frames: [WebSocketFrame]
        switch kind {
        case "masked": frames = [frame(.text, "hi", masked: true)]
        case "rsv2": frames = [frame(.text, "hi", rsv2: true)]
        case "rsv1 without deflate": frames = [frame(.text, "hi", rsv1: true)]
        case "reserved opcode": frames = [frame(WebSocketOpcode(encodedWebSocketOpcode: 3)!, "hi")]
        case "continuation first": frames = [frame(.continuation, "hi")]
        case "new message mid-message": frames = [frame(.text, "a", fin: false), frame(.text, "b")]
        case "fragmented ping": frames = [frame(.ping, "p", fin: false)]
        case "close code 1005": frames = [close(1005)]
        case "close code 999": frames = [close(999)]
        case "one-byte close":
            frames = [WebSocketFrame(fin: true, opcode: .connectionClose, data: ByteBuffer(bytes: [3]))]
        case "close reason not UTF-8":
            var payload = ByteBuffer()
            payload.writeInteger(UInt16(1000))
            payload.writeBytes([0xff, 0xfe])
            frames = [WebSocketFrame(fin: true, opcode: .connectionClose, data: payload)]
        case "too long": frames = [frame(.binary, String(repeating: "x", count: 17))]
        case "too long in fragments":
            frames = [frame(.binary, "0123456789", fin: false), frame(.continuation, "0123456")]
        default: frames = [frame(.binary, "a", fin: false)] + (0..<4).map { _ in frame(.continuation, "", fin: false) }
        }
        let last = frames.removeLast()
        for earlier in frames { #expect(machine.received(earlier) == .none) }
        let action = machine.received(last)
        #expect(failureCode(action) == code, "\(kind)")
        if case .fail(let failure) = action {
            #expect(failure.sendsClose && failure.error.webSocketCloseCode == code)
            #expect(failure.error.code == .webSocket)
        }
        #expect(machine.received(frame(.text, "after")) == .none, "nothing after a failure")
    }

    @Test func compressionLetsRSV1MarkTheFirstFrameOnly() {
        var machine = machine(compression: true)
        #expect(
            machine.received(frame(.text, "z", rsv1: true))
                == .deliver(.text, ByteBuffer(string: "z"), compressed: true)
        )
        #expect(machine.received(frame(.text, "a", fin: false, rsv1: true)) == .none)
        #expect(failureCode(machine.received(frame(.continuation, "b", rsv1: true))) == .protocolError)
    }

    @Test func aCancelClosesWithGoingAway() {
        var machine = machine()
        let action = machine.cancelled()
        #expect(failureCode(action) == .goingAway)
        if case .fail(let failure) = action { #expect(failure.error.code == .cancelled) }
    }

    @Test func closeCodesThatMayTravel() {
        for code: UInt16 in [1000, 1001, 1002, 1003, 1007, 1011, 1014, 3000, 4999] {
            #expect(WebSocketCloseCode(rawValue: code).isSendable, "\(code)")
        }
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2000, 2999, 5000] {
            #expect(!WebSocketCloseCode(rawValue: code).isSendable, "\(code)")
        }
    }
}
