import Foundation
import Testing

@testable import Courier

/// RFC 6265 section 5, one test per step of its algorithms (and 6265bis where it settles what 6265 left open).
@Suite("RFC 6265 section 5, step by step")
struct CookieAlgorithmTests {
    let page = URL(string: "https://www.example.com/docs/guide/page.html")!
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func cookie(_ header: String, from url: URL? = nil) -> Cookie? {
        CookieRules.parse(setCookie: header, from: url ?? page, now: now)
    }

    func date(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int, _ second: Int) -> Date? {
        var components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        components.timeZone = TimeZone(identifier: "UTC")
        return Calendar(identifier: .gregorian).date(from: components)
    }

    // MARK: 5.1.1 dates

    @Test func date1TokensAreSplitAtEveryDelimiter() {
        let tokens = HTTPDate.cookieDateTokens("Sat,15-Apr-17\t21:01:22;GMT").map {
            String(decoding: $0, as: UTF8.self)
        }
        #expect(tokens == ["Sat", "15", "Apr", "17", "21:01:22", "GMT"])
        #expect(HTTPDate.parseCookieDate("Sat,15-Apr-17\t21:01:22;GMT") == date(2017, 4, 15, 21, 1, 22))
    }

    @Test func date2EachTokenGoesToTheFirstProductionNotYetFound() {
        // The time is tried first, then day, month, year; once found, later tokens of that kind are skipped.
        #expect(HTTPDate.parseCookieDate("21:01:22 15 Apr 2017 22:00:00") == date(2017, 4, 15, 21, 1, 22))
        #expect(HTTPDate.parseCookieDate("17 Apr 15 21:01:22") == date(2015, 4, 17, 21, 1, 22))  // day first
        #expect(HTTPDate.parseCookieDate("2017 Apr 15 21:01:22") == date(2017, 4, 15, 21, 1, 22))  // no day: 4 digits
        #expect(HTTPDate.parseCookieDate("15 April 2017 21:01:22") == date(2017, 4, 15, 21, 1, 22))
        // The time's third field may be followed by a non-digit and anything after it.
        #expect(HTTPDate.parseCookieDate("15 Apr 2017 21:01:22:99") == date(2017, 4, 15, 21, 1, 22))
        #expect(HTTPDate.parseCookieDate("15 Apr 2017 21:01:223") == nil)  // three digits: no time, no date
    }

    @Test func date2AMatchedTimeOutOfRangeIsKeptAndFailsTheDate() {
        // The case: 91:22:33 matches the time production, so 21:01:22 is never tried.
        #expect(HTTPDate.parseCookieDate("Sat, 15-Apr-17 91:22:33 21:01:22") == nil)
        #expect(HTTPDate.parseCookieDate("Sat, 15-Apr-17 21:01:22 91:22:33") == date(2017, 4, 15, 21, 1, 22))
    }

    @Test func date3And4TwoDigitYearsGetTheirCentury() {
        #expect(HTTPDate.parseCookieDate("15 Apr 70 00:00:00") == date(1970, 4, 15, 0, 0, 0))
        #expect(HTTPDate.parseCookieDate("15 Apr 99 00:00:00") == date(1999, 4, 15, 0, 0, 0))
        #expect(HTTPDate.parseCookieDate("15 Apr 00 00:00:00") == date(2000, 4, 15, 0, 0, 0))
        #expect(HTTPDate.parseCookieDate("15 Apr 69 00:00:00") == date(2069, 4, 15, 0, 0, 0))
    }

    @Test func date5AMissingPartOrAFieldOutOfRangeFails() {
        for text in [
            "15 Apr 2017", "Apr 2017 21:01:22", "15 2017 21:01:22", "15 Apr 21:01:22",  // a part missing
            "0 Apr 2017 21:01:22", "32 Apr 2017 21:01:22", "15 Apr 1600 21:01:22",
            "15 Apr 2017 24:00:00", "15 Apr 2017 23:60:00", "15 Apr 2017 23:59:60",
        ] {
            #expect(HTTPDate.parseCookieDate(text) == nil, "\(text)")
        }
        #expect(HTTPDate.parseCookieDate("15 Apr 1601 23:59:59") == date(1601, 4, 15, 23, 59, 59))
    }

    @Test func date6ADayTheMonthLacksFails() {
        #expect(HTTPDate.parseCookieDate("30 Feb 2017 00:00:00") == nil)
        #expect(HTTPDate.parseCookieDate("29 Feb 2017 00:00:00") == nil)
        #expect(HTTPDate.parseCookieDate("29 Feb 2016 00:00:00") == date(2016, 2, 29, 0, 0, 0))
        #expect(HTTPDate.parseCookieDate("31 Apr 2017 00:00:00") == nil)
    }

    // MARK: 5.1.3 and 5.1.4 matching

    @Test func domainMatchingIsTheHostOrASubdomainNeverAnAddress() {
        #expect(CookieRules.domainMatches(host: "example.com", domain: "example.com"))
        #expect(CookieRules.domainMatches(host: "a.b.example.com", domain: "example.com"))
        #expect(!CookieRules.domainMatches(host: "badexample.com", domain: "example.com"))
        #expect(!CookieRules.domainMatches(host: "1.2.3.4", domain: "2.3.4"))
    }

    @Test func defaultPathIsTheRequestPathUpToItsLastSlash() {
        #expect(CookieRules.defaultPath(of: URL(string: "http://h")!) == "/")
        #expect(CookieRules.defaultPath(of: URL(string: "http://h/x")!) == "/")
        #expect(CookieRules.defaultPath(of: URL(string: "http://h/a/b/c")!) == "/a/b")
        #expect(CookieRules.defaultPath(of: URL(string: "http://h/a/b/")!) == "/a/b")
        #expect(CookieRules.defaultPath(of: URL(string: "http://h/caf%C3%A9/x")!) == "/caf%C3%A9")
    }

    @Test func pathMatchingIsIdentityOrAPrefixAtASlash() {
        #expect(CookieRules.pathMatches(requestPath: "/docs", cookiePath: "/docs"))
        #expect(CookieRules.pathMatches(requestPath: "/docs/a", cookiePath: "/docs/"))
        #expect(CookieRules.pathMatches(requestPath: "/docs/a", cookiePath: "/docs"))
        #expect(!CookieRules.pathMatches(requestPath: "/docsa", cookiePath: "/docs"))
        #expect(!CookieRules.pathMatches(requestPath: "/Docs", cookiePath: "/docs"))  // case matters
        #expect(CookieRules.pathMatches(requestPath: "", cookiePath: "/"))
    }

    @Test func pathMatchingComparesThePercentEncodedPathByteByByte() {
        // The request path as it goes on the wire; a cookie path with raw non-ASCII matches its encoded form.
        #expect(CookieRules.pathMatches(requestPath: "/caf%C3%A9/menu", cookiePath: "/café"))
        #expect(CookieRules.pathMatches(requestPath: "/caf%C3%A9/menu", cookiePath: "/caf%C3%A9"))
        #expect(CookieRules.pathMatches(requestPath: "/a%20b", cookiePath: "/a b"))
        #expect(!CookieRules.pathMatches(requestPath: "/a%2Fb", cookiePath: "/a/b"))  // %2F is no slash
        // Composed and decomposed é are different bytes, so different paths (no Unicode equivalence).
        #expect(!CookieRules.pathMatches(requestPath: "/caf%C3%A9", cookiePath: "/cafe\u{301}"))
        let cookie = Cookie(name: "a", value: "1", domain: "h", path: "/café")
        #expect(cookie.matches(URL(string: "http://h/caf%C3%A9/x")!))
    }

    // MARK: 5.2 the Set-Cookie header

    @Test func parse1AControlCharacterOtherThanTabIgnoresTheWholeLine() {
        for control in ["\u{0}", "\u{7}", "\u{1F}", "\u{7F}", "\r", "\n"] {
            #expect(cookie("a=b\(control)c") == nil, "\(control.unicodeScalars.first!.value)")
            #expect(cookie("a=b; Path=/\(control)") == nil)
        }
        #expect(cookie("a=b\tc")?.value == "b\tc")
    }

    @Test func parse2ThePairEndsAtTheFirstSemicolon() {
        let parsed = CookieRules.parse(setCookie: "a=b;c=d; Secure", defaultPath: "/", now: now)
        #expect(parsed?.name == "a" && parsed?.value == "b" && parsed?.attributes == [.secure])
    }

    @Test func parse3ThePairSplitsAtTheFirstEqualsSign() {
        #expect(cookie("a=b=c").map { [$0.name, $0.value] } == ["a", "b=c"])
        #expect(cookie("=b").map { [$0.name, $0.value] } == ["", "b"])
        // 6265bis: no "=" at all makes a nameless cookie whose value is the pair.
        #expect(cookie("novalue").map { [$0.name, $0.value] } == ["", "novalue"])
        #expect(cookie("a=").map { [$0.name, $0.value] } == ["a", ""])
    }

    @Test func parse4WhitespaceIsTrimmedAndEverythingElseKept() {
        #expect(cookie("  a  =  b  ").map { [$0.name, $0.value] } == ["a", "b"])
        // The case: a comma and a space inside a value are kept, not a reason to drop the cookie.
        #expect(cookie("foo=bar, baz=qux").map { [$0.name, $0.value] } == ["foo", "bar, baz=qux"])
        #expect(cookie("a b=c d").map { [$0.name, $0.value] } == ["a b", "c d"])
        #expect(cookie("ü=\u{E9}t\u{E9}").map { [$0.name, $0.value] } == ["ü", "été"])
        #expect(cookie("a=\"quoted\"")?.value == "\"quoted\"")
    }

    @Test func parse5AnEmptyOrTooLargeCookieIsIgnored() {
        #expect(cookie("=") == nil)
        #expect(cookie("  ; Path=/") == nil)
        #expect(cookie("a=" + String(repeating: "x", count: 4095)) != nil)
        #expect(cookie("a=" + String(repeating: "x", count: 4096)) == nil)
    }

    @Test func parseAttributesAreReadWithoutCaseAndUnknownOnesIgnored() {
        let parsed = CookieRules.parse(setCookie: "a=b; SECURE; hTtPoNlY; Flavour=x; ;", defaultPath: "/", now: now)
        #expect(parsed?.attributes == [.secure, .httpOnly])
        // An attribute value over 1 KiB is ignored, the cookie kept.
        let long = cookie("a=b; Path=/" + String(repeating: "p", count: 1024))
        #expect(long?.path == "/docs/guide")
    }

    @Test func parseExpiresIsACookieDateOrIgnored() throws {
        #expect(cookie("a=b; Expires=Sun, 15 Jan 2027 08:00:00 GMT")?.expires == date(2027, 1, 15, 8, 0, 0))
        #expect(cookie("a=b; Expires=whenever")?.expires == nil)
        #expect(try #require(cookie("a=b; Expires=Thu, 01 Jan 1970 00:00:00 GMT")).isExpired(at: now))
    }

    @Test func parseMaxAgeIsAnIntegerOrIgnored() throws {
        #expect(cookie("a=b; Max-Age=60")?.expires == now.addingTimeInterval(60))
        #expect(cookie("a=b; Max-Age=060")?.expires == now.addingTimeInterval(60))
        for ignored in ["", "abc", "6O", "+60", "-", "1.5", " 6 0"] {
            #expect(cookie("a=b; Max-Age=\(ignored)")?.expires == nil, "\(ignored)")
        }
        #expect(try #require(cookie("a=b; Max-Age=0")).isExpired(at: now))
        #expect(try #require(cookie("a=b; Max-Age=-5")).isExpired(at: now))
        // Past 400 days, the lifetime is capped (6265bis).
        #expect(cookie("a=b; Max-Age=99999999999999999999999")?.expires == now.addingTimeInterval(400 * 86_400))
    }

    @Test func parseDomainLosesOneLeadingDotAndIsLowercased() {
        let parsed = CookieRules.parse(setCookie: "a=b; Domain=.Example.COM; Domain=", defaultPath: "/", now: now)
        #expect(parsed?.attributes == [.domain("example.com")])
    }

    @Test func parsePathNotStartingWithASlashIsTheDefaultPath() {
        #expect(cookie("a=b; Path=/x")?.path == "/x")
        #expect(cookie("a=b; Path=x")?.path == "/docs/guide")
        #expect(cookie("a=b; Path=")?.path == "/docs/guide")
    }

    // MARK: 5.3 the storage model

    @Test func store3MaxAgeWinsOverExpiresAndTheLastOfEachCounts() {
        #expect(cookie("a=b; Max-Age=60; Expires=Sun, 15 Jan 2027 08:00:00 GMT")?.expires == now.addingTimeInterval(60))
        #expect(cookie("a=b; Max-Age=60; Max-Age=120")?.expires == now.addingTimeInterval(120))
        let twoDates = cookie("a=b; Expires=Sun, 15 Jan 2027 08:00:00 GMT; Expires=Mon, 16 Jan 2027 08:00:00 GMT")
        #expect(twoDates?.expires == date(2027, 1, 16, 8, 0, 0))
    }

    @Test func store4TheLastDomainAttributeWins() {
        // The case: a first Domain that does not match no longer drops the cookie.
        #expect(cookie("a=b; Domain=other.com; Domain=example.com")?.domain == "example.com")
        #expect(cookie("a=b; Domain=example.com; Domain=other.com") == nil)
        #expect(cookie("a=b; Domain=example.com; Domain=www.example.com")?.domain == "www.example.com")
    }

    @Test func store5APublicSuffixIsDroppedForItsOwnHostAndRefusedElsewhere() throws {
        #expect(cookie("a=b; Domain=com") == nil)
        #expect(cookie("a=b; Domain=co.uk", from: URL(string: "https://shop.example.co.uk/")!) == nil)
        let own = try #require(cookie("a=b; Domain=github.io", from: URL(string: "https://github.io/")!))
        #expect(own.hostOnly && own.domain == "github.io")
        let local = try #require(cookie("a=b; Domain=localhost", from: URL(string: "http://localhost/")!))
        #expect(local.hostOnly && local.domain == "localhost")
    }

    @Test func store6ADomainCookieOrAHostOnlyOne() throws {
        let shared = try #require(cookie("a=b; Domain=example.com"))
        #expect(!shared.hostOnly && shared.domain == "example.com")
        let hostOnly = try #require(cookie("a=b"))
        #expect(hostOnly.hostOnly && hostOnly.domain == "www.example.com")
        #expect(cookie("a=b; Domain=api.example.com") == nil)  // the host does not domain-match it
    }

    @Test func store7TheLastPathAttributeWins() {
        #expect(cookie("a=b; Path=/one; Path=/two")?.path == "/two")
        #expect(cookie("a=b; Path=/one; Path=relative")?.path == "/docs/guide")
    }

    @Test func store8ASecureCookieNeedsASecureResponse() {
        #expect(cookie("a=b; Secure", from: URL(string: "http://www.example.com/")!) == nil)
        #expect(cookie("a=b; Secure")?.secure == true)
    }

    @Test func storePrefixedNamesKeepTheirPrefixesRules() {
        #expect(cookie("__Secure-a=b") == nil)
        #expect(cookie("__Secure-a=b; Secure") != nil)
        #expect(cookie("__Host-a=b; Secure; Path=/") != nil)
        #expect(cookie("__Host-a=b; Secure; Path=/; Domain=example.com") == nil)
        #expect(cookie("__Host-a=b; Secure; Path=/docs") == nil)
        #expect(cookie("__Host-a=b; Path=/") == nil)
        #expect(cookie("__Host-a") == nil)  // a nameless cookie may not pass for a prefixed one
    }

    @Test func store11AReplacedCookieKeepsItsCreationTime() async throws {
        let jar = try CookieJar()
        let url = URL(string: "https://www.example.com/")!
        try await jar.store(setCookieHeaders: ["a=1", "b=2"], from: url)
        try await jar.store(setCookieHeaders: ["a=3"], from: url)
        #expect(await jar.headerValue(for: url) == "a=3; b=2")
    }

    // MARK: 5.4 the Cookie header

    @Test func send2CookiesOfOneResponseKeepItsOrder() async throws {
        let jar = try CookieJar()
        let url = URL(string: "https://www.example.com/")!
        try await jar.store(setCookieHeaders: ["z=y", "a=b", "m=n"], from: url)
        #expect(await jar.headerValue(for: url) == "z=y; a=b; m=n")
        // Equal names on different paths: the longer path first, then the earlier cookie, every time.
        try await jar.store(setCookieHeaders: ["x=1; Path=/", "x=2; Path=/docs", "x=3; Path=/docs/"], from: url)
        for _ in 0..<5 {
            #expect(
                await jar.headerValue(for: URL(string: "https://www.example.com/docs/a")!)
                    == "x=3; x=2; z=y; a=b; m=n; x=1"
            )
        }
    }

    @Test func send4ANamelessCookieIsSentAsItsValue() async throws {
        let jar = try CookieJar()
        let url = URL(string: "https://www.example.com/")!
        try await jar.store(setCookieHeaders: ["a=b", "loner", "=alone"], from: url)
        #expect(await jar.headerValue(for: url) == "a=b; alone")  // "=alone" replaced "loner": both are nameless
    }
}
