import CompressNIO
import Foundation
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOWebSocket
import Testing

@testable import Courier

@Suite("The WebSocket opening handshake and permessage-deflate, by the RFCs' own examples")
struct WebSocketHandshakeTests {
    func prepared(_ url: String = "http://example.com:8080/chat?room=1", headers: HTTPFields = [:]) -> PreparedRequest {
        PreparedRequest(method: .get, url: URL(string: url)!, headers: headers)
    }

    /// The keep-alive's first ping waits for the pipeline to be the WebSocket's: written while the HTTP/1 codec was
    /// still there (an upgrade slow to finish, a short interval), it trapped in the request encoder's unwrap.
    @Test func theKeepAliveWaitsForTheHTTPCodecToLeave() throws {
        let channel = EmbeddedChannel()
        var options = WebSocketOptions()
        options.keepAlive = .init(interval: .milliseconds(10), timeout: .seconds(60))
        let ending = WebSocketEnding(url: URL(string: "http://example.com/")!, timeouts: Timeouts())
        let handler = try WebSocketChannelHandler(options: options, compression: nil, ending: ending)
        let encoder = HTTPRequestEncoder()
        try channel.pipeline.syncOperations.addHandlers([encoder, handler])
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(try channel.readOutbound(as: IOData.self) == nil, "no ping while the codec is in the pipeline")

        try channel.pipeline.syncOperations.removeHandler(encoder).wait()
        handler.pipelineIsReady()
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(10))
        channel.embeddedEventLoop.run()
        let ping = try #require(try channel.readOutbound(as: WebSocketFrame.self))
        #expect(ping.opcode == .ping)
        _ = try? channel.finish()
    }

    /// A server that sends pings and reads nothing: while the channel is not writable the handler keeps only the
    /// latest ping's pong and asks for no more reads; once writable, that one pong goes and reading goes on. Every
    /// pong written had grown memory without bound (3 M pings, 323 MiB). On loopback the kernel's buffers take
    /// megabytes before the channel's writability changes, so the channel's writability is set here.
    @Test func pingsWhileTheChannelIsNotWritableGetOnlyTheLatestPong() throws {
        let channel = EmbeddedChannel()
        let ending = WebSocketEnding(url: URL(string: "http://example.com/")!, timeouts: Timeouts())
        let handler = try WebSocketChannelHandler(options: .init(), compression: nil, ending: ending)
        let reads = ReadCounter()
        try channel.pipeline.syncOperations.addHandlers([reads, handler])
        func ping(_ number: UInt32) -> WebSocketFrame {
            var payload = ByteBuffer()
            payload.writeInteger(number)
            return WebSocketFrame(fin: true, opcode: .ping, data: payload)
        }
        try channel.writeInbound(ping(0))
        #expect(try channel.readOutbound(as: WebSocketFrame.self)?.data == ping(0).data, "answered at once")

        channel.isWritable = false
        channel.pipeline.fireChannelWritabilityChanged()
        for number in 1...1_000 { try channel.writeInbound(ping(UInt32(number))) }
        channel.read()
        #expect(try channel.readOutbound(as: WebSocketFrame.self) == nil, "no pong queued while not writable")
        #expect(reads.count == 0, "no read asked for while a pong waits")

        channel.isWritable = true
        channel.pipeline.fireChannelWritabilityChanged()
        let pong = try #require(try channel.readOutbound(as: WebSocketFrame.self))
        #expect(pong.opcode == .pong && pong.data == ping(1_000).data, "the latest ping's")
        #expect(try channel.readOutbound(as: WebSocketFrame.self) == nil)
        #expect(reads.count == 1, "the held read went on")
        _ = try? channel.finish()
    }

    /// Counts the reads that reach the head of the pipeline.
    private final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = NIOAny
        var count = 0
        func read(context: ChannelHandlerContext) {
            count += 1
            context.read()
        }
    }

    @Test func theAcceptKeyOfRFC6455() {
        // RFC 6455 §1.3's example.
        #expect(WebSocketHandshake.accept(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(Data(base64Encoded: WebSocketHandshake.makeKey())?.count == 16)
    }

    /// Masking keys come from the kernel 1 KiB at a time: over several refills the numbers keep changing (not one
    /// batch again, not zeros), and 1,000 keys are (all but certainly) all different.
    @Test func maskingKeysComeFromTheSystemInBatchesAndDiffer() {
        var random = BatchedSystemRandom()
        let numbers = (0..<1_000).map { _ in random.next() }
        #expect(Set(numbers).count == numbers.count)
        #expect(numbers[0..<128] != numbers[128..<256])
    }

    /// A call's transcript keeps messages within its bounds and counts the rest; a long message is cut, a text one
    /// at a character, a binary one copied out of the buffer it came in.
    @Test func aTranscriptKeepsWhatItHasRoomForAndCountsTheRest() {
        #expect(WebSocketTranscript.prefix(of: .text("aé"), bytes: 2) == .text("a"))
        #expect(WebSocketTranscript.prefix(of: .text("aé"), bytes: 3) == .text("aé"))
        var big = ByteBuffer(repeating: 7, count: 10)
        big.moveReaderIndex(forwardBy: 2)
        #expect(WebSocketTranscript.prefix(of: .binary(big), bytes: 4) == .binary(ByteBuffer(repeating: 7, count: 4)))

        let transcript = WebSocketTranscript()
        let large = WebSocketMessage.binary(ByteBuffer(repeating: 1, count: 100_000))
        for _ in 0..<70 { transcript.record(large, .received) }  // 64 KiB kept of each: 4 MiB after 64
        transcript.record(.text(""), .sent)  // nothing to keep, so it fits
        var (kept, leftOut) = transcript.records
        #expect(kept.count == 65 && leftOut == 6)
        #expect(kept[0].message.byteCount == 64 * 1024 && kept[0].byteCount == 100_000)
        #expect(kept.last?.direction == .sent)

        let many = WebSocketTranscript()
        for index in 0..<(WebSocketTranscript.maxMessages + 5) { many.record(.text("\(index)"), .sent) }
        (kept, leftOut) = many.records
        #expect(kept.count == WebSocketTranscript.maxMessages && leftOut == 5)
    }

    @Test func theRequestCarriesTheUpgradeAndTheOffers() throws {
        var options = WebSocketOptions()
        options.compression = true
        options.subprotocols = ["chat", "superchat"]
        var headers = HTTPFields()
        headers[.authorization] = "Bearer t"
        headers[.connection] = "keep-alive"
        let handshake = try WebSocketHandshake(prepared(headers: headers), options: options, key: "k")
        let fields = handshake.head.headers
        #expect(handshake.head.uri == "/chat?room=1" && handshake.head.method == .GET)
        #expect(fields["Host"] == ["example.com:8080"])
        #expect(fields["Upgrade"] == ["websocket"] && fields["Connection"] == ["Upgrade"])
        #expect(fields["Sec-WebSocket-Key"] == ["k"] && fields["Sec-WebSocket-Version"] == ["13"])
        #expect(fields["Sec-WebSocket-Extensions"] == ["permessage-deflate; client_max_window_bits"])
        #expect(fields["Sec-WebSocket-Protocol"] == ["chat, superchat"])
        #expect(fields["Authorization"] == ["Bearer t"])
    }

    @Test func aRequestThatCannotOpenIsRefusedBeforeAnythingIsSent() {
        #expect(throws: CourierError.self) {
            _ = try WebSocketHandshake(PreparedRequest(method: .post, url: URL(string: "http://h/")!), options: .init())
        }
        var options = WebSocketOptions()
        options.subprotocols = ["bad name"]
        #expect(throws: CourierError.self) { _ = try WebSocketHandshake(prepared(), options: options) }
    }

    func response(_ headers: [(String, String)]) -> HTTPResponseHead {
        HTTPResponseHead(version: .http1_1, status: .switchingProtocols, headers: HTTPHeaders(headers))
    }

    @Test func the101IsCheckedAsRFC6455Asks() throws {
        var options = WebSocketOptions()
        options.compression = true
        options.subprotocols = ["chat"]
        let handshake = try WebSocketHandshake(prepared(), options: options, key: "dGhlIHNhbXBsZSBub25jZQ==")
        let good: [(String, String)] = [
            ("Upgrade", "WebSocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Accept", "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
        ]
        #expect(try handshake.check(response(good)) == .init(subprotocol: nil, compression: nil))
        let agreed = try handshake.check(
            response(
                good + [
                    (
                        "Sec-WebSocket-Extensions",
                        "permessage-deflate; server_no_context_takeover; client_max_window_bits=10"
                    ),
                    ("Sec-WebSocket-Protocol", "chat"),
                ]
            )
        )
        #expect(agreed.subprotocol == "chat")
        #expect(agreed.compression?.serverNoContextTakeover == true && agreed.compression?.clientMaxWindowBits == 10)
        let bad: [[(String, String)]] = [
            Array(good.dropFirst()),
            [good[0], good[2]],
            [good[0], good[1], ("Sec-WebSocket-Accept", "nope")],
            good + [("Sec-WebSocket-Protocol", "other")],
            good + [("Sec-WebSocket-Extensions", "x-unknown")],
            good + [("Sec-WebSocket-Extensions", "permessage-deflate; server_max_window_bits=7")],
            good + [("Sec-WebSocket-Extensions", "permessage-deflate; mystery")],
            good + [
                (
                    "Sec-WebSocket-Extensions",
                    "permessage-deflate; server_no_context_takeover; server_no_context_takeover"
                )
            ],
            good + [("Sec-WebSocket-Extensions", "permessage-deflate;;")],
        ]
        for headers in bad {
            #expect(throws: CourierError.self, "\(headers)") { _ = try handshake.check(response(headers)) }
        }
        let withoutOffer = try WebSocketHandshake(prepared(), options: .init(), key: "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(throws: CourierError.self) {
            _ = try withoutOffer.check(response(good + [("Sec-WebSocket-Extensions", "permessage-deflate")]))
        }
    }

    @Test func permessageDeflateReadsRFC7692sExampleAndRoundTrips() throws {
        let deflate = try PerMessageDeflate(.init())
        // RFC 7692 §7.2.3.1: "Hello" compressed in one message.
        let hello = try deflate.inflate(ByteBuffer(bytes: [0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00]), limit: 100)
        #expect(String(buffer: hello) == "Hello")
        // §7.2.3.2: the same message again, using the context of the first.
        let again = try deflate.inflate(ByteBuffer(bytes: [0xf2, 0x00, 0x11, 0x00, 0x00]), limit: 100)
        #expect(String(buffer: again) == "Hello")

        let sender = try PerMessageDeflate(.init())
        let receiver = try PerMessageDeflate(.init())
        for text in ["first message", String(repeating: "repeat ", count: 500), "first message"] {
            let sent = try sender.deflate(ByteBuffer(string: text))
            #expect(String(buffer: try receiver.inflate(sent, limit: 1 << 20)) == text)
        }
    }

    @Test func aDeflateBombStopsAtTheLimit() throws {
        let sender = try PerMessageDeflate(.init())
        var zeros = ByteBuffer()
        zeros.writeRepeatingByte(0, count: 1 << 20)
        let bomb = try sender.deflate(zeros)
        #expect(bomb.readableBytes < 4096)
        let receiver = try PerMessageDeflate(.init())
        #expect(throws: PerMessageDeflate.Failure.tooBig) { _ = try receiver.inflate(bomb, limit: 64 << 10) }
        let other = try PerMessageDeflate(.init())
        #expect(throws: PerMessageDeflate.Failure.corrupt) {
            _ = try other.inflate(ByteBuffer(bytes: [0xff, 0xff, 0xff, 0xff]), limit: 100)
        }
    }

    @Test func webSocketURLsAreSentAsHTTP() {
        #expect(Session.httpForm(ofWebSocketURL: "ws://h/a") == "http://h/a")
        #expect(Session.httpForm(ofWebSocketURL: "WSS://h/a") == "https://h/a")
        #expect(Session.httpForm(ofWebSocketURL: "/chat") == "/chat")
        #expect(WebSocketChannelHandler.fitting(String(repeating: "é", count: 100)).utf8.count == 122)
    }
}
