import NIOCore

/// The machine's network interfaces that are up, read through `getifaddrs` (via SwiftNIO).
enum NetworkInterfaces {
    /// An interface that is up, with one of its addresses.
    struct Entry: Sendable {
        var name: String
        var address: SocketAddress
    }

    /// Every address of every interface that is up.
    static func up() -> [Entry] {
        let devices = (try? System.enumerateDevices()) ?? []
        return devices.compactMap { device in
            guard let address = device.address else { return nil }
            return Entry(name: device.name, address: address)
        }
    }

    /// The kind of interface that owns `localAddress`, the local end of a connection; `.other` if none does.
    static func kind(owning localAddress: SocketAddress?) -> InterfaceKind {
        guard let ip = localAddress?.ipAddress else { return .other }
        if ip.hasPrefix("127.") || ip == "::1" { return .loopback }
        return up().first { $0.address.ipAddress == ip }.map { InterfaceKind(interfaceName: $0.name) } ?? .other
    }

    /// Whether any interface other than loopback is up.
    static var hasExternalInterface: Bool {
        up().contains { InterfaceKind(interfaceName: $0.name) != .loopback }
    }
}
