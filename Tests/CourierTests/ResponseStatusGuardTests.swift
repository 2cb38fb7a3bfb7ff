import AsyncHTTPClient
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import Testing

@testable import Courier

/// The handlers that keep a status AsyncHTTPClient or NIO would trap on away from them, fed part by part.
@Suite("Response status guard: heads outside 100–999 never reach AsyncHTTPClient")
struct ResponseStatusGuardTests {
    private func head(_ code: UInt) -> HTTPClientResponsePart {
        .head(HTTPResponseHead(version: .http1_1, status: .custom(code: code, reasonPhrase: "X")))
    }

    @Test(arguments: [0, 9, 42, 99, 1000] as [UInt])
    func anHTTP1HeadOutsideTheRangeIsRefusedAndNothingAfterItPasses(code: UInt) throws {
        let channel = EmbeddedChannel(handler: ResponseStatusGuard())
        #expect(throws: CourierError.self) { try channel.writeInbound(head(code)) }
        try channel.writeInbound(HTTPClientResponsePart.body(ByteBuffer(string: "hello")))
        try channel.writeInbound(HTTPClientResponsePart.end(nil))
        #expect(try channel.readInbound(as: HTTPClientResponsePart.self) == nil)
        #expect(!channel.isActive)
    }

    @Test(arguments: [100, 101, 200, 404, 599, 999] as [UInt])
    func anHTTP1HeadInTheRangePasses(code: UInt) throws {
        let channel = EmbeddedChannel(handler: ResponseStatusGuard())
        try channel.writeInbound(head(code))
        try channel.writeInbound(HTTPClientResponsePart.end(nil))
        #expect(try channel.readInbound(as: HTTPClientResponsePart.self) == head(code))
        #expect(try channel.readInbound(as: HTTPClientResponsePart.self) == .end(nil))
        _ = try channel.finish()
    }

    @Test(arguments: ["-5", "42", "042", "1000", "+20", "2x0", "", " 200"])
    func anHTTP2StatusThatIsNotThreeDigitsFrom100IsRefusedBeforeNIOParsesIt(status: String) throws {
        let channel = EmbeddedChannel(handler: HTTP2ResponseStatusGuard())
        let headers = HTTP2Frame.FramePayload.headers(.init(headers: [":status": status]))
        #expect(throws: CourierError.self) { try channel.writeInbound(headers) }
        try channel.writeInbound(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(ByteBuffer(string: "x")))))
        #expect(try channel.readInbound(as: HTTP2Frame.FramePayload.self) == nil)
    }

    @Test func anHTTP2StatusInTheRangeAndTrailersPass() throws {
        let channel = EmbeddedChannel(handler: HTTP2ResponseStatusGuard())
        try channel.writeInbound(HTTP2Frame.FramePayload.headers(.init(headers: [":status": "200"])))
        try channel.writeInbound(HTTP2Frame.FramePayload.headers(.init(headers: ["grpc-status": "0"], endStream: true)))
        #expect(try channel.readInbound(as: HTTP2Frame.FramePayload.self) != nil)
        #expect(try channel.readInbound(as: HTTP2Frame.FramePayload.self) != nil)
    }

    @Test func theInstalledGuardSitsRightAfterTheDecoderAndTheCallersInitialiserStillRuns() throws {
        let called = Locked(false)
        var configuration = HTTPClient.Configuration()
        configuration.http1_1ConnectionDebugInitializer = { channel in
            called.withLock { $0 = true }
            return channel.eventLoop.makeSucceededVoidFuture()
        }
        let installed = ResponseStatusGuard.installing(on: configuration)
        let channel = EmbeddedChannel()
        // AsyncHTTPClient's order: the encoder, then the decoder (which watches the requests go out).
        try channel.pipeline.syncOperations.addHandler(HTTPRequestEncoder())
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPResponseDecoder()))
        let initialiser = try #require(installed.http1_1ConnectionDebugInitializer)
        try initialiser(channel).wait()
        #expect(called.withLock { $0 })
        // The decoder needs a request before it reads an answer.
        try channel.writeOutbound(
            HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"))
        )
        try channel.writeOutbound(HTTPClientRequestPart.end(nil))
        #expect(throws: CourierError.self) {
            try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 042 X\r\nContent-Length: 5\r\n\r\nhello"))
        }
        #expect(try channel.readInbound(as: HTTPClientResponsePart.self) == nil)
    }
}
