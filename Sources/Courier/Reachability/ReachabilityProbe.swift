import NIOCore
import NIOPosix

/// One check of a host: are the interfaces it needs up, and does its port accept a TCP connection?
enum ReachabilityProbe {
    /// The status of `host:port` now; never throws and never takes longer than `timeout` (plus name resolution).
    static func check(host: String, port: Int, timeout: Duration) async -> ReachabilityStatus {
        if !host.isLoopbackHost && !NetworkInterfaces.hasExternalInterface { return .notReachable }
        do {
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(TimeAmount(timeout))
                .connect(host: host, port: port)
                .get()
            let local = channel.localAddress
            try? await channel.close()
            return .reachable(NetworkInterfaces.kind(owning: local))
        } catch {
            return .notReachable
        }
    }
}
