import Testing

@testable import Courier

/// RFC 6125 §6.4 matching of a DNS host name against a certificate's DNS name, as ``ServerIdentity`` does it.
@Suite("A host name matched against a certificate's DNS name")
struct ServerIdentityTests {
    @Test(arguments: [
        ("other.test", "other.test", true),
        ("other.test", "another.test", false),
        ("a.example.com", "*.example.com", true),
        ("b.a.example.com", "*.example.com", false),  // one label only
        ("example.com", "*.example.com", false),
        (".example.com", "*.example.com", false),  // an empty label is no label
        ("example.com", "*.com", false),  // a wildcard over a top-level name names no host
        ("a.example.com", "a*.example.com", false),  // only a whole leftmost label
        ("a.example.com", "*", false),
    ])
    func matching(host: String, pattern: String, matches: Bool) {
        #expect(ServerIdentity.matches(Array(host.utf8), pattern: Array(pattern.utf8)) == matches)
    }
}
