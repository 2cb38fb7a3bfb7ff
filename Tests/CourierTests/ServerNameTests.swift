import Testing

@testable import Courier

/// The server a connection's first request names, for the connection metrics' `server.address` and `server.port`.
@Suite("A Host field read as a server name")
struct ServerNameTests {
    @Test(arguments: [
        ("example.com", false, "example.com", 80),
        ("example.com", true, "example.com", 443),
        ("example.com:8080", true, "example.com", 8080),
        ("127.0.0.1:9", false, "127.0.0.1", 9),
        ("[::1]:8443", false, "::1", 8443),
        ("[::1]", true, "::1", 443),
        ("host:99999", false, "host:99999", 80),
        ("host:", false, "host:", 80),
        ("::1", false, "::1", 80),
    ])
    func hostAndPort(field: String, isSecure: Bool, host: String, port: Int) {
        #expect(ServerName(hostField: field, isSecure: isSecure) == ServerName(host: host, port: port))
    }

    @Test func noFieldIsNoHost() {
        #expect(ServerName(hostField: nil, isSecure: false) == ServerName(host: "", port: 80))
    }
}
