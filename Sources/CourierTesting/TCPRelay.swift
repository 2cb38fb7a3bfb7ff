import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A TCP relay on 127.0.0.1 to another loopback port, which a test can cut and restore: the way to take a
/// server (a database) away from a client and give it back without stopping the server.
///
/// ```swift
/// let relay = try await TCPRelay.start(to: databasePort)
/// relay.cut()      // open connections close, new ones are refused
/// relay.restore()  // connections go through again
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
        let state = RelayState((false, [:]))
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RelayConnector(targetPort: targetPort, state: state))
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

    /// Stops listening and closes what is open.
    public func shutdown() async {
        cut()
        try? await server.close()
    }
}

/// Whether a relay is cut, and the connections it has open (both sides), shared by its connections.
private typealias RelayState = NIOLockedValueBox<(isCut: Bool, open: [ObjectIdentifier: any Channel])>

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
        ClientBootstrap(group: context.eventLoop).connect(host: "127.0.0.1", port: targetPort).assumeIsolated().whenComplete { result in
            guard case .success(let peer) = result else { return channel.close(promise: nil) }
            do {
                _ = channel.pipeline.syncOperations.removeHandler(self)
                try join(channel, peer)
                state.withLockedValue {
                    $0.open[ObjectIdentifier(channel)] = channel
                    $0.open[ObjectIdentifier(peer)] = peer
                }
                channel.closeFuture.whenComplete { _ in state.withLockedValue { $0.open[ObjectIdentifier(channel)] = nil } }
                peer.closeFuture.whenComplete { _ in state.withLockedValue { $0.open[ObjectIdentifier(peer)] = nil } }
                try channel.syncOptions?.setOption(.autoRead, value: true)
            } catch {
                peer.close(promise: nil)
                channel.close(promise: nil)
            }
        }
        context.fireChannelActive()
    }
}
