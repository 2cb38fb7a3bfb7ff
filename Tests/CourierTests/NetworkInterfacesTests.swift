@testable import Courier
import NIOCore
import Testing

@Suite("Network interfaces")
struct NetworkInterfacesTests {
    @Test func loopbackIsUpAndNamedSo() {
        let loopback = NetworkInterfaces.up().filter { InterfaceKind(interfaceName: $0.name) == .loopback }
        #expect(!loopback.isEmpty)
        #expect(NetworkInterfaces.kind(owning: try? .init(ipAddress: "127.0.0.1", port: 80)) == .loopback)
        #expect(NetworkInterfaces.kind(owning: nil) == .other)
    }
}
