import Foundation
import Testing

@testable import Courier

@Suite("RFC 6265 cookie rules")
struct CookieRulesTests {
    let page = URL(string: "https://www.example.com/docs/guide/page.html")!
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aPlainCookieIsHostOnlyWithTheDefaultPath() throws {
        let cookie = try #require(CookieRules.parse(setCookie: " id = a3fWa ", from: page, now: now))
        #expect(cookie.name == "id" && cookie.value == "a3fWa")
        #expect(cookie.domain == "www.example.com" && cookie.hostOnly)
        #expect(cookie.path == "/docs/guide")
        #expect(cookie.expires == nil && !cookie.secure && !cookie.httpOnly && cookie.sameSite == nil)
    }

    @Test func attributesAreReadWithoutCaseAndMaxAgeWinsOverExpires() throws {
        let cookie = try #require(
            CookieRules.parse(
                setCookie:
                    "id=1; EXPIRES=Wed, 21 Oct 2015 07:28:00 GMT; max-age=60; Domain=.Example.com; path=/docs; Secure; HttpOnly; SameSite=lax",
                from: page,
                now: now
            )
        )
        #expect(cookie.expires == now.addingTimeInterval(60))
        #expect(cookie.domain == "example.com" && !cookie.hostOnly)
        #expect(cookie.path == "/docs" && cookie.secure && cookie.httpOnly && cookie.sameSite == .lax)
        let expired = try #require(
            CookieRules.parse(setCookie: "id=1; Expires=Wed, 21 Oct 2015 07:28:00 GMT", from: page, now: now)
        )
        #expect(expired.isExpired(at: now))
        #expect(try #require(CookieRules.parse(setCookie: "id=1; Max-Age=0", from: page, now: now)).isExpired(at: now))
    }

    @Test func cookiesRFC6265SaysToIgnoreAreIgnored() {
        #expect(CookieRules.parse(setCookie: "=", from: page) == nil)
        #expect(CookieRules.parse(setCookie: "id=1; Domain=other.com", from: page) == nil)  // not this host's domain
        #expect(CookieRules.parse(setCookie: "id=1; Domain=com", from: page) == nil)  // a bare top-level domain
        #expect(CookieRules.parse(setCookie: "id=1; Secure", from: URL(string: "http://www.example.com/")!) == nil)
        #expect(CookieRules.parse(setCookie: "id=" + String(repeating: "x", count: 5000), from: page) == nil)
        #expect(CookieRules.parse(setCookie: "id=a\u{7}b", from: page) == nil)
        #expect(CookieRules.parse(setCookie: "id=1; Domain=1.2.3.4", from: URL(string: "http://1.2.3.4/")!) != nil)
        #expect(CookieRules.parse(setCookie: "id=1; Domain=2.3.4", from: URL(string: "http://1.2.3.4/")!) == nil)
    }

    @Test(arguments: [true, false])
    func aPublicSuffixIsNoCookieDomain(embedded: Bool) throws {
        // Both kinds of suffix: an ICANN one (co.uk), a private one (github.io), a wildcard (*.ck) and its exception.
        let list =
            embedded
            ? PublicSuffixList.embedded
            : try #require(
                PublicSuffixList(
                    String(
                        decoding: try Data(
                            contentsOf:
                                URL(filePath: PublicSuffixList.systemPaths[0])
                        ),
                        as: UTF8.self
                    )
                )
            )
        for suffix in ["co.uk", "github.io", "com", "uk", "anything.ck", "s3.amazonaws.com"] {
            #expect(list.isPublicSuffix(suffix), "\(suffix)")
        }
        for domain in ["example.co.uk", "courier.github.io", "example.com", "www.ck", "a.b.example.com"] {
            #expect(!list.isPublicSuffix(domain), "\(domain)")
        }
    }

    @Test func aCookieForAPublicSuffixIsRefusedUnlessItIsTheHostItself() throws {
        let shop = URL(string: "https://shop.example.co.uk/")!
        #expect(CookieRules.parse(setCookie: "id=1; Domain=co.uk", from: shop) == nil)
        #expect(CookieRules.parse(setCookie: "id=1; Domain=.co.uk", from: shop) == nil)
        #expect(
            CookieRules.parse(setCookie: "id=1; Domain=github.io", from: URL(string: "https://courier.github.io/")!)
                == nil
        )
        #expect(
            try #require(CookieRules.parse(setCookie: "id=1; Domain=example.co.uk", from: shop)).domain
                == "example.co.uk"
        )
        #expect(
            try #require(
                CookieRules.parse(
                    setCookie: "id=1; Domain=courier.github.io",
                    from: URL(string: "https://courier.github.io/")!
                )
            )
            .hostOnly == false
        )
        // The host that is itself a public suffix keeps its cookie, host-only (RFC 6265 §5.3 step 5).
        let own = try #require(
            CookieRules.parse(setCookie: "id=1; Domain=github.io", from: URL(string: "https://github.io/")!)
        )
        #expect(own.hostOnly && own.domain == "github.io")
    }

    @Test func domainPathAndSecureDecideWhichRequestsGetACookie() {
        let shared = Cookie(name: "a", value: "1", domain: ".example.com", hostOnly: false, path: "/docs", secure: true)
        #expect(shared.matches(URL(string: "https://api.example.com/docs")!))
        #expect(shared.matches(URL(string: "https://example.com/docs/x")!))
        #expect(!shared.matches(URL(string: "https://example.com/docsx")!))
        #expect(!shared.matches(URL(string: "https://example.com/")!))
        #expect(!shared.matches(URL(string: "http://example.com/docs")!))
        #expect(!shared.matches(URL(string: "https://badexample.com/docs")!))
        let hostOnly = Cookie(name: "b", value: "2", domain: "example.com")
        #expect(hostOnly.matches(URL(string: "http://example.com/anything")!))
        #expect(!hostOnly.matches(URL(string: "http://www.example.com/")!))
        #expect(CookieRules.pathMatches(requestPath: "", cookiePath: "/"))
        #expect(CookieRules.defaultPath(of: URL(string: "http://h/")!) == "/")
        #expect(CookieRules.defaultPath(of: URL(string: "http://h/one")!) == "/")
    }
}
