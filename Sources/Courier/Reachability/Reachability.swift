#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Reachability listeners per domain (HLNetworking's `listening(with:)` and `stopListening`): one
/// ``ReachabilityMonitor`` per host and port, started on first listen and stopped on request.
///
/// ```swift
/// let reachability = Reachability()
/// for await status in await reachability.listen(to: URL(string: "https://api.example.com")!) { … }
/// await reachability.stopListening(to: URL(string: "https://api.example.com")!)
/// ```
public actor Reachability {
    private var monitors: [String: ReachabilityMonitor] = [:]
    private let interval: Duration
    private let probeTimeout: Duration

    /// Creates a registry whose monitors probe every `interval`.
    public init(interval: Duration = .seconds(5), probeTimeout: Duration = .seconds(3)) {
        self.interval = interval
        self.probeTimeout = probeTimeout
    }

    /// The status of `url`'s host now and each change after it; starts a monitor for the host if none runs.
    public func listen(to url: URL) async -> AsyncStream<ReachabilityStatus> {
        await monitor(for: url).updates()
    }

    /// The last status seen for `url`'s host (``ReachabilityStatus/unknown`` if nobody listens to it).
    public func status(of url: URL) async -> ReachabilityStatus {
        guard let monitor = monitors[Self.key(url)] else { return .unknown }
        return await monitor.status
    }

    /// Stops the monitor of `url`'s host; its listeners' streams end.
    public func stopListening(to url: URL) async {
        guard let monitor = monitors.removeValue(forKey: Self.key(url)) else { return }
        await monitor.stop()
    }

    /// Stops every monitor.
    public func stopAll() async {
        let all = monitors.values
        monitors = [:]
        for monitor in all { await monitor.stop() }
    }

    private func monitor(for url: URL) async -> ReachabilityMonitor {
        if let known = monitors[Self.key(url)] { return known }
        let monitor = ReachabilityMonitor(url: url, interval: interval, probeTimeout: probeTimeout)
        monitors[Self.key(url)] = monitor
        await monitor.start()
        return monitor
    }

    private static func key(_ url: URL) -> String {
        let endpoint = ReachabilityMonitor.endpoint(of: url)
        return "\(endpoint.host.lowercased()):\(endpoint.port)"
    }
}
