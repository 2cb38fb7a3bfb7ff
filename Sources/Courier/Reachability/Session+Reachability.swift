#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Session {
    /// A monitor of the host this session's requests go to by default: the host and port of the configuration's
    /// ``Configuration/baseURL`` now (HLNetworking watches its base URL's host unless told otherwise). Start it,
    /// or ``ReachabilityMonitor/check()`` it, as any monitor; a later change of the base URL does not move it.
    ///
    /// Throws ``CourierError/Code/invalidURL`` when the configuration has no base URL with a host.
    public nonisolated func reachabilityMonitor(
        interval: Duration = .seconds(5),
        probeTimeout: Duration = .seconds(3)
    ) throws
        -> ReachabilityMonitor
    {
        guard let base = currentConfiguration.baseURL, let host = base.host(percentEncoded: false), !host.isEmpty else {
            throw CourierError(
                code: .invalidURL,
                message: "the session has no base URL to watch; give the monitor a URL of its own"
            )
        }
        return ReachabilityMonitor(url: base, interval: interval, probeTimeout: probeTimeout)
    }
}
