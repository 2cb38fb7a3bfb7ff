/// Whether a host can be reached, and over what kind of interface (HLNetworking's reachability status).
public enum ReachabilityStatus: Sendable, Hashable, CustomStringConvertible {
    /// Not probed yet.
    case unknown
    /// No interface is up, or the host's port did not accept a connection.
    case notReachable
    /// A connection to the host's port succeeded, leaving through this kind of interface.
    case reachable(InterfaceKind)

    /// Whether the status is ``reachable(_:)``.
    public var isReachable: Bool {
        if case .reachable = self { true } else { false }
    }

    /// Whether the host was reached through a Wi-Fi interface (`wl*`): HLNetworking's `isReachableViaWiFi`.
    ///
    /// On Linux the interface kind comes from its name (see ``InterfaceKind``), so this is exact for Wi-Fi and
    /// `false` for Ethernet, loopback and tunnels, where iOS's "via Wi-Fi" meant "not via the cellular modem". For
    /// that meaning use `isReachable && !isReachableViaWWAN`.
    public var isReachableViaWiFi: Bool { self == .reachable(.wifi) }

    /// Whether the host was reached through a mobile broadband modem (`ww*`): HLNetworking's `isReachableViaWWAN`.
    /// A phone tethered over USB or Wi-Fi looks like Ethernet or Wi-Fi to Linux, so it does not count.
    public var isReachableViaWWAN: Bool { self == .reachable(.cellular) }

    /// `unknown`, `not reachable`, or `reachable via KIND`.
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .notReachable: "not reachable"
        case .reachable(let kind): "reachable via \(kind.rawValue)"
        }
    }
}

/// The kind of a network interface, from its Linux name.
public enum InterfaceKind: String, Sendable, Hashable {
    /// `lo`.
    case loopback
    /// `eth*`, `en*`: Ethernet.
    case wired
    /// `wl*`: Wi-Fi.
    case wifi
    /// `ww*`: a mobile broadband modem.
    case cellular
    /// Anything else: tunnels, bridges, virtual interfaces.
    case other

    /// The kind an interface name suggests, by Linux's and systemd's naming conventions. Elsewhere, where a name
    /// such as `en0` says nothing of the medium, only loopback (`lo0`) is told apart and every other name is
    /// `.other`.
    public init(interfaceName name: String) {
        #if os(Linux)
        if name == "lo" || name.hasPrefix("lo:") {
            self = .loopback
        } else if name.hasPrefix("wl") {
            self = .wifi
        } else if name.hasPrefix("ww") {
            self = .cellular
        } else if name.hasPrefix("eth") || name.hasPrefix("en") {
            self = .wired
        } else {
            self = .other
        }
        #else
        self = name.hasPrefix("lo") ? .loopback : .other
        #endif
    }
}
