import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The machine's network interfaces that are up: their addresses through `getifaddrs` (via SwiftNIO), their
/// state from Linux's `/sys/class/net/NAME/operstate`.
enum NetworkInterfaces {
    /// An interface that is up, with one of its addresses.
    struct Entry: Sendable {
        var name: String
        var address: SocketAddress
    }

    /// Every address of every interface that is up. An interface whose state the kernel reports as `down`
    /// (or `lowerlayerdown`, `notpresent`) is left out; `unknown`, which loopback and some virtual interfaces
    /// report, counts as up, and so does an interface without the file (a system other than Linux).
    static func up() -> [Entry] {
        let devices = (try? System.enumerateDevices()) ?? []
        var states: [String: Bool] = [:]
        return devices.compactMap { device in
            guard let address = device.address else { return nil }
            let isUp = states[device.name] ?? isOperational(device.name)
            states[device.name] = isUp
            return isUp ? Entry(name: device.name, address: address) : nil
        }
    }

    private static func isOperational(_ name: String) -> Bool {
        #if !os(Linux)
        return true  // no state file to ask there: every interface with an address counts as up
        #else
        guard !name.contains("/"),
            let state = try? String(contentsOfFile: "/sys/class/net/\(name)/operstate", encoding: .utf8)
        else {
            return true
        }
        return !["down", "lowerlayerdown", "notpresent", "dormant"].contains(
            state.trimmingWhitespace()
        )
        #endif
    }

    /// The kind of interface that owns `localAddress`, the local end of a connection; `.other` if none does.
    static func kind(owning localAddress: SocketAddress?) -> InterfaceKind {
        guard let ip = localAddress?.ipAddress else { return .other }
        if ip.isLoopbackHost { return .loopback }
        return up().first { $0.address.ipAddress == ip }.map { InterfaceKind(interfaceName: $0.name) } ?? .other
    }

    /// Whether any interface other than loopback is up.
    static var hasExternalInterface: Bool {
        up().contains { InterfaceKind(interfaceName: $0.name) != .loopback }
    }
}
