import NIOCore
import Testing

@testable import Courier

@Suite("Network interfaces")
struct NetworkInterfacesTests {
    @Test func loopbackIsUpAndNamedSo() {
        let loopback = NetworkInterfaces.up().filter { InterfaceKind(interfaceName: $0.name) == .loopback }
        #expect(!loopback.isEmpty)
        #expect(NetworkInterfaces.kind(owning: try? .init(ipAddress: "127.0.0.1", port: 80)) == .loopback)
        #expect(NetworkInterfaces.kind(owning: nil) == .other)
    }

    @Test func wifiAndWWANHelpersFollowTheInterfaceKind() {
        let cases: [(String, wifi: Bool, wwan: Bool)] = [
            ("wlp2s0", true, false), ("wlan0", true, false), ("wwan0", false, true), ("wwp0s20u4", false, true),
            ("eth0", false, false), ("enp3s0", false, false), ("lo", false, false), ("tun0", false, false),
        ]
        for (name, wifi, wwan) in cases {
            let status = ReachabilityStatus.reachable(InterfaceKind(interfaceName: name))
            #expect(status.isReachableViaWiFi == wifi, "\(name)")
            #expect(status.isReachableViaWWAN == wwan, "\(name)")
        }
        for status in [ReachabilityStatus.unknown, .notReachable] {
            #expect(!status.isReachableViaWiFi && !status.isReachableViaWWAN)
        }
    }
}
