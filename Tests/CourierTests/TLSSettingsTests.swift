import Courier
import Testing

@Suite("Per-host TLS policies")
struct TLSSettingsTests {
    @Test func exactHostsWinOverWildcardsWhichWinOverTheDefault() {
        let pinned = TLSPolicy(pinning: .publicKeys(["a"]))
        let wildcard = TLSPolicy(validatesDomainName: false)
        let settings = TLSSettings(hosts: ["API.example.com": pinned, "*.example.com": wildcard])
        #expect(settings.policy(forHost: "api.EXAMPLE.com") == pinned)
        #expect(settings.policy(forHost: "cdn.example.com") == wildcard)
        #expect(settings.policy(forHost: "a.b.example.com") == wildcard)
        #expect(settings.policy(forHost: "example.com") == .standard)
        #expect(settings.policy(forHost: "example.org") == .standard)
        #expect(settings.policy(forHost: "") == .standard)
    }
}
