import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP relay on 127.0.0.1 to another loopback port, which a test can cut, slow down and restore: the way to
/// take a server (a database) away from a client, or make it slow, and give it back without stopping the server.
///
/// ```swift
/// let relay = try await TCPRelay.start(to: databasePort)
/// relay.cut()                     // open connections close, new ones are refused
/// relay.restore()                 // connections go through again
/// relay.slow(by: .seconds(2))     // every read is passed on 2 s late, in order
/// relay.slow(by: .zero)           // on time again
/// ```
public final class TCPRelay: Sendable {
    /// The port clients connect to.
    public let port: Int
    private let server: any Channel
    private let state: RelayState

    private init(port: Int, server: any Channel, state: RelayState) {
        self.port = port
        self.server = server
        self.state = state
    }

    /// Starts a relay to `targetPort` on 127.0.0.1.
    public static func start(to targetPort: Int) async throws -> TCPRelay {
        let state = RelayState(Relay())
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        RelayDelay(state: state),
                        RelayConnector(targetPort: targetPort, state: state)
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return TCPRelay(port: server.localAddress?.port ?? 0, server: server, state: state)
    }

    /// Closes every relayed connection and refuses new ones until ``restore()``.
    public func cut() {
        let open = state.withLockedValue { state in
            state.isCut = true
            return Array(state.open.values)
        }
        for channel in open { channel.close(promise: nil) }
    }

    /// Lets connections through again.
    public func restore() {
        state.withLockedValue { $0.isCut = false }
    }

    /// Passes every read on `delay` late from now on, in both directions and in order (`.zero`: on time): a
    /// server that is there but slow.
    public func slow(by delay: Duration) {
        state.withLockedValue { $0.delay = delay }
    }

    /// Stops listening and closes what is open.
    public func shutdown() async {
        cut()
        try? await server.close()
    }
}

/// Whether a relay is cut, how late it passes reads on, and the connections it has open (both sides).
private struct Relay {
    var isCut = false
    var delay = Duration.zero
    var open: [ObjectIdentifier: any Channel] = [:]
}

/// A relay's state, shared by its connections.
private typealias RelayState = NIOLockedValueBox<Relay>

/// Passes reads on after the relay's delay, in the order they came. The end of the connection is passed on at
/// once: what is still held back then is dropped, as a slow network's bytes in flight are.
private final class RelayDelay: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    let state: RelayState
    /// When the last held-back read is due: a later one never goes before it.
    private var lastDue = NIODeadline.uptimeNanoseconds(0)
    private var isRemoved = false

    init(state: RelayState) { self.state = state }

    func handlerRemoved(context: ChannelHandlerContext) { isRemoved = true }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let delay = state.withLockedValue { $0.delay }
        let now = NIODeadline.now()
        guard delay > .zero || lastDue > now else { return context.fireChannelRead(data) }
        lastDue = max(lastDue, now + TimeAmount(delay))
        context.eventLoop.assumeIsolated().scheduleTask(deadline: lastDue) { [self] in
            guard !isRemoved else { return }
            context.fireChannelRead(data)
            context.fireChannelReadComplete()
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if lastDue <= .now() { context.fireChannelReadComplete() }
    }
}

/// Connects a relayed connection, once it is active, to the target and joins the two (or closes it while the
/// relay is cut).
private final class RelayConnector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    let targetPort: Int
    let state: RelayState

    init(targetPort: Int, state: RelayState) {
        self.targetPort = targetPort
        self.state = state
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        guard !state.withLockedValue({ $0.isCut }) else { return context.close(promise: nil) }
        let state = state
        ClientBootstrap(group: context.eventLoop).connect(host: "127.0.0.1", port: targetPort).assumeIsolated()
            .whenComplete { result in
                guard case .success(let peer) = result else { return channel.close(promise: nil) }
                do {
                    _ = channel.pipeline.syncOperations.removeHandler(self)
                    try peer.pipeline.syncOperations.addHandler(RelayDelay(state: state))
                    try join(channel, peer)
                    state.withLockedValue {
                        $0.open[ObjectIdentifier(channel)] = channel
                        $0.open[ObjectIdentifier(peer)] = peer
                    }
                    channel.closeFuture.whenComplete { _ in
                        state.withLockedValue { $0.open[ObjectIdentifier(channel)] = nil }
                    }
                    peer.closeFuture.whenComplete { _ in state.withLockedValue { $0.open[ObjectIdentifier(peer)] = nil }
                    }
                    try channel.syncOptions?.setOption(.autoRead, value: true)
                } catch {
                    peer.close(promise: nil)
                    channel.close(promise: nil)
                }
            }
        context.fireChannelActive()
    }
}
