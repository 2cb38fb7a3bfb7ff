import Courier
import Foundation
import Testing

@Suite("Proxy URLs and the *_proxy variables")
struct ProxySettingsTests {
    @Test func proxyURLsAsCurlSpellsThem() throws {
        #expect(
            try Proxy(url: "http://user:p%40ss@proxy.internal:8080")
                == .http(
                    host: "proxy.internal",
                    port: 8080,
                    credentials: .init(username: "user", password: "p@ss")
                )
        )
        #expect(try Proxy(url: "proxy.internal") == .http(host: "proxy.internal", port: 3128))
        #expect(try Proxy(url: "socks5h://127.0.0.1") == .socks5(host: "127.0.0.1", port: 1080))
        #expect(
            try Proxy(url: "socks5://u:p@proxy")
                == .socks5(host: "proxy", credentials: .init(username: "u", password: "p"))
        )
        for bad in ["ftp://proxy", "http://", "http://proxy:0"] {
            #expect(throws: CourierError.self) { try Proxy(url: bad) }
        }
        let error = try #require(throws: CourierError.self) { try Proxy(url: "ftp://user:secret@proxy") }
        #expect(!error.message.contains("secret"))
    }

    @Test func theEnvironmentChoosesProxiesAndBypassesNoProxyAndLoopback() throws {
        let settings = try ProxySettings.environment([
            "http_proxy": "http://p1:3128", "HTTPS_PROXY": "http://p2:3129",
            "NO_PROXY": "internal.example, .corp.example:443,10.0.0.1",
        ])
        #expect(settings.proxy(for: URL(string: "http://api.example.com/")!)?.host == "p1")
        #expect(settings.proxy(for: URL(string: "https://api.example.com/")!)?.host == "p2")
        #expect(settings.proxy(for: URL(string: "https://internal.example/")!) == nil)
        #expect(settings.proxy(for: URL(string: "https://a.internal.example/")!) == nil)
        #expect(settings.proxy(for: URL(string: "https://x.corp.example/")!) == nil)
        #expect(settings.proxy(for: URL(string: "http://10.0.0.1/")!) == nil)
        #expect(settings.proxy(for: URL(string: "http://localhost:8080/")!) == nil)
        #expect(settings.proxy(for: URL(string: "http://127.0.0.1:8080/")!) == nil)
        #expect(settings.proxy(for: URL(string: "http://notinternal.example/")!)?.host == "p1")
        // HTTP_PROXY in uppercase is ignored (CGI sets it from a request header); all_proxy fills the gaps.
        let upper = try ProxySettings.environment(["HTTP_PROXY": "http://evil:1", "ALL_PROXY": "socks5://s:1080"])
        #expect(upper.http == .socks5(host: "s", port: 1080))
        #expect(
            try ProxySettings.environment(["no_proxy": "*", "http_proxy": "p"]).proxy(for: URL(string: "http://a.b/")!)
                == nil
        )
        #expect(throws: CourierError.self) { try ProxySettings.environment(["https_proxy": "gopher://x"]) }
        #expect(try ProxySettings.environment([:]) == ProxySettings(bypassesLoopback: true))
    }
}

@Suite("Reachability names and targets")
struct ReachabilityNamingTests {
    @Test func interfaceKindsFromLinuxNames() {
        #expect(InterfaceKind(interfaceName: "lo") == .loopback)
        #expect(InterfaceKind(interfaceName: "eth0") == .wired)
        #expect(InterfaceKind(interfaceName: "enp3s0") == .wired)
        #expect(InterfaceKind(interfaceName: "wlan0") == .wifi)
        #expect(InterfaceKind(interfaceName: "wwan0") == .cellular)
        #expect(InterfaceKind(interfaceName: "docker0") == .other)
        #expect(ReachabilityStatus.reachable(.wifi).description == "reachable via wifi")
    }
}
