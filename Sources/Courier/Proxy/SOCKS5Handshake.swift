import NIOCore

/// The client side of a SOCKS5 handshake (RFC 1928), with username and password authentication (RFC 1929),
/// which AsyncHTTPClient's own SOCKS support lacks. Once the proxy has connected to the target, the handler
/// removes itself and calls `established` with the channel, now a tunnel to the target.
final class SOCKS5Handshake: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum Step { case greeting, authentication, connecting, done }

    private let host: String
    private let port: Int
    private let proxy: Proxy
    private var credentials: Proxy.Credentials? { proxy.credentials }
    private let established: (any Channel) -> Void
    private let failed: (CourierError) -> Void
    private var step = Step.greeting
    private var received = ByteBuffer()

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

    func channelActive(context: ChannelHandlerContext) {
        // Offer username/password only when there are credentials, else no authentication.
        write(context, credentials == nil ? [5, 1, 0] : [5, 1, 2])
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var chunk = unwrapInboundIn(data)
        received.writeBuffer(&chunk)
        do {
            try advance(context)
        } catch let error as CourierError {
            step = .done
            failed(error)
            context.close(promise: nil)
        } catch {
            context.close(promise: nil)
        }
    }

    private func advance(_ context: ChannelHandlerContext) throws {
        while step != .done {
            switch step {
            case .greeting:
                guard let reply = received.readBytes(length: 2) else { return }
                switch (reply[0], reply[1]) {
                case (5, 0): connect(context)
                case (5, 2) where credentials != nil: authenticate(context)
                default: throw Proxy.authenticationMethodRefusal(by: proxy)
                }
            case .authentication:
                guard let reply = received.readBytes(length: 2) else { return }
                guard reply[1] == 0 else { throw Proxy.refusal(by: proxy, "refused the credentials") }
                connect(context)
            case .connecting:
                guard let length = Self.replyLength(received) else { return }
                let reply = received.readBytes(length: length) ?? []
                guard reply[1] == 0 else {
                    throw Proxy.refusal(by: proxy, "could not connect to \(host):\(port) (\(Self.reason(reply[1])))")
                }
                step = .done
                let channel = context.channel
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                established(channel)
            case .done:
                return
            }
        }
    }

    private func authenticate(_ context: ChannelHandlerContext) {
        guard let credentials else { return }
        let user = Array(credentials.username.utf8.prefix(255))
        let password = Array(credentials.password.utf8.prefix(255))
        write(context, [1, UInt8(user.count)] + user + [UInt8(password.count)] + password)
        step = .authentication
    }

    private func connect(_ context: ChannelHandlerContext) {
        let name = Array(host.utf8.prefix(255))
        write(context, [5, 1, 0, 3, UInt8(name.count)] + name + [UInt8(port >> 8), UInt8(port & 0xFF)])
        step = .connecting
    }

    private func write(_ context: ChannelHandlerContext, _ bytes: [UInt8]) {
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: bytes)), promise: nil)
    }

    /// The length of a complete CONNECT reply at the front of `buffer`, or `nil` until it has all arrived.
    private static func replyLength(_ buffer: ByteBuffer) -> Int? {
        guard let head = buffer.getBytes(at: buffer.readerIndex, length: 5) else { return nil }
        let address: Int
        switch head[3] {
        case 1: address = 4
        case 4: address = 16
        case 3: address = 1 + Int(head[4])
        default: address = 4
        }
        let length = 4 + address + 2
        return buffer.readableBytes >= length ? length : nil
    }

    /// What a SOCKS5 reply code (RFC 1928 §6) says.
    static func reason(_ code: UInt8) -> String {
        switch code {
        case 1: "general failure"
        case 2: "not allowed by its rules"
        case 3: "network unreachable"
        case 4: "host unreachable"
        case 5: "connection refused"
        case 6: "TTL expired"
        default: "reply \(code)"
        }
    }
}
