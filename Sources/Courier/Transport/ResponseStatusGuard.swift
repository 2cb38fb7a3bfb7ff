import AsyncHTTPClient
package import NIOCore
import NIOHPACK
package import NIOHTTP1
import NIOHTTP2

/// Keeps a response head with a status code outside 100–999 away from AsyncHTTPClient, which would trap on it.
///
/// AsyncHTTPClient 1.37's request state machine (`HTTPRequestStateMachine.receivedHTTPResponseHead`) takes every
/// code below 200 but 101 for an informational head and waits for the real one, so the body or end of
/// `HTTP/1.1 042 X` reaches a `preconditionFailure` ("How can we receive a response body, if we haven't received
/// a head"). Over HTTP/2, NIO's codec turns `:status: -5` into `UInt(-5)`, which traps too, and any code past 999
/// would trap in HTTP types' `HTTPResponse.Status`. A server must not be able to end the process, so this handler
/// sits on every connection AsyncHTTPClient opens (installed through its connection initialisers, which run before
/// the connection takes its first request): right after the HTTP/1.1 decoder, or in front of the HTTP/2 stream's
/// codec. A head whose status is not three digits from 100 to 999 fails the request with
/// ``CourierError/Code/invalidResponse`` and closes the connection; nothing after it is read.
/// The upstream report and fix are in <doc:UpstreamReports>.
package final class ResponseStatusGuard: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPClientResponsePart
    package typealias InboundOut = HTTPClientResponsePart

    /// A guard for one connection.
    package init() {}

    /// Set once a head was refused: every later part of that connection is dropped.
    private var refused = false

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        if case .head(let head) = unwrapInboundIn(data), !Self.isValid(code: Int(head.status.code)) {
            refuse(context, status: String(head.status.code))
            return
        }
        context.fireChannelRead(data)
    }

    private func refuse(_ context: ChannelHandlerContext, status: String) {
        refused = true
        context.fireErrorCaught(Self.refusal(status))
        context.close(promise: nil)
    }

    /// Whether AsyncHTTPClient and HTTP types can take `code`: the `3DIGIT` of RFC 9110 §15, less the codes under 100,
    /// which no class defines.
    package static func isValid(code: Int) -> Bool { (100...999).contains(code) }

    /// Whether an HTTP/2 `:status` value is three ASCII digits from 100 to 999 (RFC 9113 §8.3.2).
    static func isValid(h2Status value: String) -> Bool {
        let bytes = value.utf8
        guard bytes.count == 3, bytes.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return false
        }
        return bytes.first != UInt8(ascii: "0")
    }

    package static func refusal(_ status: String) -> CourierError {
        CourierError(
            code: .invalidResponse,
            message: "the server sent an invalid status code \(CourierError.printable(status))"
        )
    }
}

/// The HTTP/2 side of ``ResponseStatusGuard``: checks `:status` before NIO's codec parses it.
final class HTTP2ResponseStatusGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload

    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        if case .headers(let headers) = unwrapInboundIn(data), let status = headers.headers.first(name: ":status"),
            !ResponseStatusGuard.isValid(h2Status: status)
        {
            refused = true
            context.fireErrorCaught(ResponseStatusGuard.refusal(status))
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(data)
    }
}

extension ResponseStatusGuard {
    /// `configuration` with the guards installed on every HTTP/1.1 connection and HTTP/2 stream, ahead of any
    /// initialiser the caller set (which still runs, after).
    static func installing(on configuration: HTTPClient.Configuration) -> HTTPClient.Configuration {
        var configuration = configuration
        configuration.http1_1ConnectionDebugInitializer = ConnectionInitializers.chaining(
            { channel in
                let sync = channel.pipeline.syncOperations
                let decoder = try sync.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self)
                try sync.addHandler(ResponseStatusGuard(), position: .after(decoder))
            },
            before: configuration.http1_1ConnectionDebugInitializer
        )
        configuration.http2StreamChannelDebugInitializer = ConnectionInitializers.chaining(
            { channel in
                let sync = channel.pipeline.syncOperations
                let codec = try sync.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self)
                try sync.addHandler(HTTP2ResponseStatusGuard(), position: .before(codec))
            },
            before: configuration.http2StreamChannelDebugInitializer
        )
        return configuration
    }
}
