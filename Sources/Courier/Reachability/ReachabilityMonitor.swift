#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Watches whether one host can be reached (HLNetworking's reachability API, on Linux): it probes the host's
/// port at an interval (a TCP connection, closed at once) and checks that an interface is up.
///
/// ```swift
/// let monitor = ReachabilityMonitor(url: URL(string: "https://api.example.com")!)
/// await monitor.start()
/// for await status in await monitor.updates() { print(status) }   // the current status first, then changes
/// ```
public actor ReachabilityMonitor {
    /// The host probed.
    public nonisolated let host: String
    /// The port probed.
    public nonisolated let port: Int
    /// The time between probes.
    public nonisolated let interval: Duration
    /// How long a probe waits for the connection.
    public nonisolated let probeTimeout: Duration

    /// The last status seen.
    public private(set) var status: ReachabilityStatus = .unknown
    private let broadcaster = EventBroadcaster<ReachabilityStatus>(replaysLatest: false)
    private var loop: Task<Void, Never>?

    /// Creates a monitor of `host:port`; nothing is probed before ``start()`` or ``check()``.
    public init(host: String, port: Int, interval: Duration = .seconds(5), probeTimeout: Duration = .seconds(3)) {
        self.host = host
        self.port = port
        self.interval = interval
        self.probeTimeout = probeTimeout
    }

    /// Creates a monitor of a URL's host and port (80 or 443 by scheme when the URL has none).
    public init(url: URL, interval: Duration = .seconds(5), probeTimeout: Duration = .seconds(3)) {
        let endpoint = Self.endpoint(of: url)
        self.init(host: endpoint.host, port: endpoint.port, interval: interval, probeTimeout: probeTimeout)
    }

    /// The host and port a URL's requests connect to (80 or 443 by scheme when the URL has no port).
    package nonisolated static func endpoint(of url: URL) -> (host: String, port: Int) {
        (url.host(percentEncoded: false) ?? "", url.effectivePort)
    }

    /// Whether the last status was reachable.
    public var isReachable: Bool { status.isReachable }

    /// Whether the last status was reachable through Wi-Fi (see ``ReachabilityStatus/isReachableViaWiFi``).
    public var isReachableViaWiFi: Bool { status.isReachableViaWiFi }

    /// Whether the last status was reachable through a mobile broadband modem (see
    /// ``ReachabilityStatus/isReachableViaWWAN``).
    public var isReachableViaWWAN: Bool { status.isReachableViaWWAN }

    /// The status now, and every change after it, until the monitor stops or the consumer stops iterating.
    public func updates() -> AsyncStream<ReachabilityStatus> {
        broadcaster.subscribe(startingWith: [status])
    }

    /// Probes now and returns the status, telling listeners when it changed.
    @discardableResult
    public func check() async -> ReachabilityStatus {
        let probed = await ReachabilityProbe.check(host: host, port: port, timeout: probeTimeout)
        if probed != status {  // re-read after the await: a concurrent check may have set it already
            status = probed
            broadcaster.yield(probed)
        }
        return probed
    }

    /// Starts probing every ``interval``; does nothing if already started.
    public func start() {
        guard loop == nil else { return }
        loop = Task { [weak self, interval] in
            while !Task.isCancelled {
                await self?.check()
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// Stops probing and ends every update stream (stop listening).
    public func stop() {
        loop?.cancel()
        loop = nil
        broadcaster.finish()
    }

    /// Probes until the host is reachable or `timeout` has passed, and returns the last status.
    public func waitUntilReachable(timeout: Duration) async -> ReachabilityStatus {
        let deadline = ContinuousClock.now + timeout
        while true {
            let now = await check()
            if now.isReachable || ContinuousClock.now >= deadline || Task.isCancelled { return now }
            try? await Task.sleep(for: min(interval, ContinuousClock.now.duration(to: deadline)))
        }
    }
}
