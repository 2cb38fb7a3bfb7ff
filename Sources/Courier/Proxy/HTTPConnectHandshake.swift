import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The client side of an HTTP proxy's `CONNECT` (RFC 9110 §9.3.6), for connections Courier makes itself (a
/// WebSocket's; AsyncHTTPClient tunnels its own). Writes the request when the connection is up, reads the proxy's
/// answer (at most 16 KiB of head), and, once a 2xx has come, removes itself and calls `established` with the
/// channel, now a tunnel to the target; any other answer calls `failed` with a typed error and closes.
final class HTTPConnectHandshake: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let host: String
    private let port: Int
    private let proxy: Proxy
    private let established: (any Channel) -> Void
    private let failed: (CourierError) -> Void
    private var received = ByteBuffer()
    private var isDone = false
    private var sentRequest = false

    /// The longest answer head Courier reads from a proxy.
    static let maxHeadBytes = 16 << 10

    init(
        host: String,
        port: Int,
        proxy: Proxy,
        established: @escaping (any Channel) -> Void,
        failed: @escaping (CourierError) -> Void
    ) {
        self.host = host
        self.port = port
        self.proxy = proxy
        self.established = established
        self.failed = failed
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { sendRequest(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        sendRequest(context)
        context.fireChannelActive()
    }

    private func sendRequest(_ context: ChannelHandlerContext) {
        guard !sentRequest else { return }
        sentRequest = true
        let authority = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var text = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let credentials = proxy.credentials {
            let pair = Data((credentials.username + ":" + credentials.password).utf8).base64EncodedString()
            text += "Proxy-Authorization: Basic \(pair)\r\n"
        }
        text += "\r\n"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: text)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isDone else { return context.fireChannelRead(data) }
        var chunk = unwrapInboundIn(data)
        received.writeBuffer(&chunk)
        guard let end = received.readableBytesView.firstRange(of: [13, 10, 13, 10]) else {
            if received.readableBytes > Self.maxHeadBytes {
                fail(context, "the proxy's answer head passed \(Self.maxHeadBytes) bytes")
            }
            return
        }
        let headLength = end.upperBound - received.readerIndex
        let head = received.readString(length: headLength) ?? ""
        let status = Self.status(of: head)
        guard let status, (200..<300).contains(status) else {
            if status == 407 { return fail(context, Proxy.authenticationRefusal(by: proxy)) }
            return fail(
                context,
                Proxy.refusal(
                    by: proxy,
                    "refused to open a tunnel to \(host):\(port)"
                        + (status.map { " (HTTP \($0))" } ?? " (not an HTTP answer)")
                )
            )
        }
        isDone = true
        let channel = context.channel
        let rest = received
        received = ByteBuffer()
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        established(channel)
        if rest.readableBytes > 0 { channel.pipeline.syncOperations.fireChannelRead(NIOAny(rest)) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !isDone { fail(context, "the proxy closed the connection before it opened the tunnel") }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !isDone else { return context.fireErrorCaught(error) }
        fail(context, "the connection to the proxy failed: \(error)")
    }

    private func fail(_ context: ChannelHandlerContext, _ reason: String) {
        fail(context, CourierError(code: .connectionFailed, message: CourierError.printable(reason)))
    }

    private func fail(_ context: ChannelHandlerContext, _ error: CourierError) {
        guard !isDone else { return }
        isDone = true
        failed(error)
        context.close(promise: nil)
    }

    /// The status code of an answer head's status line (`HTTP/1.1 200 Connection established`).
    static func status(of head: String) -> Int? {
        let line = head.prefix { $0 != "\r" && $0 != "\n" }
        let parts = line.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3 else { return nil }
        return Int(parts[1])
    }
}
