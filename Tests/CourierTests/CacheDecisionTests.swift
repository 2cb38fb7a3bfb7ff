import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite("Cache rules: Cache-Control, HTTP dates, freshness and the decision machine")
struct CacheDecisionTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func request(_ headers: HTTPFields = [:], method: HTTPRequest.Method = .get) -> PreparedRequest {
        PreparedRequest(
            method: method,
            url: URL(string: "http://h/a?b=2&a=1")!,
            headers: headers,
            body: .empty,
            tag: nil,
            userInfo: [:]
        )
    }

    func entry(
        _ headers: HTTPFields,
        status: Int = 200,
        storedSecondsAgo: Double = 0,
        vary: [String: String] = [:]
    ) -> CacheEntry {
        var fields = headers
        if fields[.date] == nil { fields[.date] = HTTPDate.format(now.addingTimeInterval(-storedSecondsAgo)) }
        return CacheEntry(
            key: "k",
            method: "GET",
            url: "http://h/a",
            status: status,
            headers: fields,
            varyingRequestHeaders: vary,
            storedAt: now.addingTimeInterval(-storedSecondsAgo),
            body: Data("x".utf8)
        )
    }

    func decision(
        _ policy: CachePolicy,
        _ request: PreparedRequest? = nil,
        options: CacheOptions = CacheOptions()
    ) -> CacheDecision {
        CacheDecision(policy: policy, options: options, request: request ?? self.request())
    }

    func body(_ headers: HTTPFields, status: Int = 200) -> ResponseBody {
        var fields = headers
        if fields[.date] == nil { fields[.date] = HTTPDate.format(now) }
        return ResponseBody(status: HTTPResponse.Status(code: status), headers: fields, data: Data("x".utf8))
    }

    func stores(
        _ policy: CachePolicy,
        _ headers: HTTPFields,
        status: Int = 200,
        request: PreparedRequest? = nil,
        options: CacheOptions = CacheOptions()
    ) -> Bool {
        decision(policy, request, options: options).entryToStore(
            body(headers, status: status),
            key: CacheKey(text: "k"),
            requestTime: now,
            responseTime: now
        ) != nil
    }

    @Test func parsesCacheControl() {
        let control = CacheControl([
            .cacheControl: "max-age=60, no-cache=\"Set-Cookie, X\", Private, stale-if-error=5, bogus, max-age=x"
        ])
        #expect(control.maxAge == 0)  // the later, invalid max-age wins and means stale
        #expect(control.noCache && control.isPrivate && control.staleIfError == 5)
        #expect(CacheControl([.cacheControl: "s-maxage=10, must-revalidate"]).sharedMaxAge == 10)
        #expect(CacheControl([.cacheControl: "max-stale"]).maxStale == Int.max)
    }

    @Test func parsesAndFormatsHTTPDates() {
        let date = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == date)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == date)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == date)
        #expect(HTTPDate.format(date) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse(HTTPDate.format(now)) == now)
        for bad in [
            "", "yesterday", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 32 Nov 1994 08:49:37 GMT", "0",
            // RFC 9111 §5.3: only IMF-fixdate and the two obsolete forms; anything else is invalid.
            "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun 06 Nov 1994 08:49:37 GMT", "Sun, 06-Nov-1994 08:49:37 GMT", "Sun,  06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994  08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 8:49:37 GMT",
            "Sun, 06 nov 1994 08:49:37 GMT", "sun, 06 Nov 1994 08:49:37 GMT", " Sun, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT ", "Sun, 31 Feb 1994 08:49:37 GMT", "Sunday, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 9223372036854775807 08:49:37 GMT", "Sun Nov 6 08:49:37 1994",
        ] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad)")
        }
    }

    func lifetime(_ rules: HTTPFreshness, status: Int, headers: HTTPFields) -> Duration {
        rules.lifetime(status: status, headers: headers, control: CacheControl(headers), receivedAt: now)
    }

    @Test func freshnessLifetimeFollowsTheRFCOrder() {
        let rules = HTTPFreshness(options: CacheOptions())
        let date = HTTPDate.format(now)
        #expect(
            lifetime(
                rules,
                status: 200,
                headers: [.cacheControl: "max-age=60", .expires: HTTPDate.format(now + 10), .date: date]
            ) == .seconds(60)
        )
        #expect(
            lifetime(rules, status: 200, headers: [.expires: HTTPDate.format(now + 30), .date: date]) == .seconds(30)
        )
        #expect(lifetime(rules, status: 200, headers: [.expires: "0", .date: date]) == .zero)
        // Heuristic: 10% of the time since Last-Modified, at most a day.
        #expect(
            lifetime(rules, status: 200, headers: [.lastModified: HTTPDate.format(now - 1000), .date: date])
                == .seconds(100)
        )
        #expect(
            lifetime(rules, status: 200, headers: [.lastModified: HTTPDate.format(now - 10_000_000), .date: date])
                == .seconds(86_400)
        )
        #expect(
            lifetime(rules, status: 201, headers: [.lastModified: HTTPDate.format(now - 1000), .date: date]) == .zero
        )
        // s-maxage only for a shared cache.
        #expect(lifetime(rules, status: 200, headers: [.cacheControl: "s-maxage=5"]) == .zero)
        #expect(
            lifetime(
                HTTPFreshness(options: CacheOptions(isShared: true)),
                status: 200,
                headers: [.cacheControl: "s-maxage=5, max-age=9"]
            ) == .seconds(5)
        )
    }

    @Test func initialAgeTakesTheAgeHeaderAndTheDelay() {
        let age = HTTPFreshness.initialAge(
            headers: [.age: "30", .date: HTTPDate.format(now)],
            requestTime: now - 2,
            responseTime: now
        )
        #expect(age == .seconds(32))
        let skewed = HTTPFreshness.initialAge(
            headers: [.date: HTTPDate.format(now - 100)],
            requestTime: now,
            responseTime: now
        )
        #expect(skewed == .seconds(100))
    }

    @Test func httpServesFreshAndRevalidatesStale() {
        let fresh = entry([.cacheControl: "max-age=60", .eTag: "\"a\""], storedSecondsAgo: 10)
        #expect(decision(.http).lookup(fresh, now: now) == .serve(fresh, age: .seconds(10)))
        let stale = entry([.cacheControl: "max-age=60", .eTag: "\"a\""], storedSecondsAgo: 100)
        #expect(decision(.http).lookup(stale, now: now) == .fetch(revalidating: stale, fallback: stale))
        let noValidators = entry([.cacheControl: "max-age=60"], storedSecondsAgo: 100)
        #expect(decision(.http).lookup(noValidators, now: now) == .fetch(revalidating: nil, fallback: noValidators))
        #expect(decision(.http).lookup(nil, now: now) == .fetch(revalidating: nil, fallback: nil))
    }

    @Test func noCacheAlwaysRevalidatesAndRequestDirectivesCount() {
        let noCache = entry([.cacheControl: "no-cache, max-age=600", .eTag: "\"a\""], storedSecondsAgo: 1)
        #expect(decision(.http).lookup(noCache, now: now) == .fetch(revalidating: noCache, fallback: noCache))
        let fresh = entry([.cacheControl: "max-age=600", .eTag: "\"a\""], storedSecondsAgo: 100)
        #expect(
            decision(.http, request([.cacheControl: "no-cache"])).lookup(fresh, now: now)
                == .fetch(revalidating: fresh, fallback: fresh)
        )
        #expect(
            decision(.http, request([.cacheControl: "max-age=50"])).lookup(fresh, now: now)
                == .fetch(revalidating: fresh, fallback: fresh)
        )
        #expect(decision(.http, request([.cacheControl: "only-if-cached"])).lookup(nil, now: now) == .miss)
        let stale = entry([.cacheControl: "max-age=10"], storedSecondsAgo: 20)
        #expect(
            decision(.http, request([.cacheControl: "max-stale=15"])).lookup(stale, now: now)
                == .serve(stale, age: .seconds(20))
        )
    }

    @Test func staleWhileRevalidateServesStaleWithinItsWindow() {
        let inside = entry(
            [.cacheControl: "max-age=10, stale-while-revalidate=30", .eTag: "\"a\""],
            storedSecondsAgo: 30
        )
        #expect(decision(.http).lookup(inside, now: now) == .serveStale(inside, age: .seconds(30)))
        let outside = entry(
            [.cacheControl: "max-age=10, stale-while-revalidate=30", .eTag: "\"a\""],
            storedSecondsAgo: 50
        )
        #expect(decision(.http).lookup(outside, now: now) == .fetch(revalidating: outside, fallback: outside))
        let mustRevalidate = entry(
            [.cacheControl: "max-age=10, stale-while-revalidate=30, must-revalidate", .eTag: "\"a\""],
            storedSecondsAgo: 30
        )
        #expect(
            decision(.http).lookup(mustRevalidate, now: now)
                == .fetch(revalidating: mustRevalidate, fallback: mustRevalidate)
        )
    }

    @Test func staleIfErrorAnswersNetworkFailuresWithinItsWindow() {
        let failure = CourierError(code: .connectionFailed, message: "refused")
        let inside = entry([.cacheControl: "max-age=10, stale-if-error=60"], storedSecondsAgo: 30)
        #expect(decision(.http).fallback(after: failure, entry: inside, now: now)?.0 == inside)
        #expect(
            decision(.http).fallback(after: .httpStatus(.serviceUnavailable, bodyPreview: nil), entry: inside, now: now)
                != nil
        )
        #expect(
            decision(.http).fallback(after: .httpStatus(.notFound, bodyPreview: nil), entry: inside, now: now) == nil
        )
        #expect(decision(.http).fallback(after: .cancelled(), entry: inside, now: now) == nil)
        let outside = entry([.cacheControl: "max-age=10, stale-if-error=60"], storedSecondsAgo: 100)
        #expect(decision(.http).fallback(after: failure, entry: outside, now: now) == nil)
        let without = entry([.cacheControl: "max-age=10"], storedSecondsAgo: 30)
        #expect(decision(.http).fallback(after: failure, entry: without, now: now) == nil)
        #expect(
            decision(.http, request([.cacheControl: "stale-if-error=60"])).fallback(
                after: failure,
                entry: without,
                now: now
            ) != nil
        )
        #expect(decision(.networkElseCache).fallback(after: failure, entry: outside, now: now)?.0 == outside)
    }

    @Test func whatHTTPStores() {
        #expect(stores(.http, [.cacheControl: "max-age=60"]))
        #expect(!stores(.http, [.cacheControl: "no-store, max-age=60"]))
        #expect(!stores(.http, [.cacheControl: "max-age=60"], status: 206))
        #expect(!stores(.http, [.cacheControl: "max-age=60"], request: request(method: .post)))
        #expect(!stores(.http, [.cacheControl: "max-age=60"], request: request([.cacheControl: "no-store"])))
        #expect(!stores(.http, [.cacheControl: "max-age=60", .vary: "*"]))
        #expect(!stores(.http, [:], status: 201))  // no lifetime, not heuristically cacheable
        #expect(stores(.http, [:], status: 200))
        let authorized = request([.authorization: "Bearer t"])
        #expect(!stores(.http, [.cacheControl: "max-age=60"], request: authorized))
        #expect(stores(.http, [.cacheControl: "max-age=60, public"], request: authorized))
        #expect(
            stores(
                .http,
                [.cacheControl: "max-age=60"],
                request: authorized,
                options: CacheOptions(storesAuthorizedResponses: true)
            )
        )
        #expect(!stores(.http, [.cacheControl: "private, max-age=60"], options: CacheOptions(isShared: true)))
        #expect(!stores(.http, [.cacheControl: "max-age=60"], options: CacheOptions(excludes: { _, _ in true })))
    }

    @Test func whatTimeToLivePoliciesStore() {
        #expect(stores(.cacheElseNetwork(), [:]))
        #expect(stores(.networkElseCache, [:], request: request(method: .post)))
        #expect(!stores(.cacheElseNetwork(), [:], status: 500))
        #expect(!stores(.cacheElseNetwork(), [:], status: 206))
        #expect(!stores(.cacheElseNetwork(), [.cacheControl: "no-store"]))
        #expect(!stores(.networkOnly, [:]))
        let stored = decision(.cacheElseNetwork(ttl: .seconds(300))).entryToStore(
            body([:]),
            key: CacheKey(text: "k"),
            requestTime: now,
            responseTime: now
        )
        #expect(stored?.expiresAt == now + 300)
    }

    @Test func timeToLivePolicies() {
        let young = entry([:], storedSecondsAgo: 10)
        #expect(
            decision(.cacheElseNetwork(ttl: .seconds(60))).lookup(young, now: now) == .serve(young, age: .seconds(10))
        )
        #expect(
            decision(.cacheElseNetwork(ttl: .seconds(5))).lookup(young, now: now)
                == .fetch(revalidating: nil, fallback: nil)
        )
        let withETag = entry([.eTag: "\"a\""], storedSecondsAgo: 10)
        #expect(
            decision(.cacheElseNetwork(ttl: .seconds(5))).lookup(withETag, now: now)
                == .fetch(revalidating: withETag, fallback: nil)
        )
        #expect(decision(.cacheOnly).lookup(nil, now: now) == .miss)
        #expect(decision(.cacheOnly).lookup(young, now: now) == .serve(young, age: .seconds(10)))
        #expect(decision(.networkElseCache).lookup(young, now: now) == .fetch(revalidating: nil, fallback: young))
    }

    @Test func varyMatchesOnTheNamedRequestHeaders() {
        let stored = entry([.cacheControl: "max-age=60", .vary: "Accept-Language"], vary: ["accept-language": "fr"])
        #expect(
            decision(.http, request([.acceptLanguage: "fr"])).lookup(stored, now: now) == .serve(stored, age: .zero)
        )
        #expect(
            decision(.http, request([.acceptLanguage: "de"])).lookup(stored, now: now)
                == .fetch(revalidating: nil, fallback: nil)
        )
        #expect(decision(.cacheOnly, request()).lookup(stored, now: now) == .miss)
        let made = decision(.http, request([.acceptLanguage: "de"])).entryToStore(
            body([.cacheControl: "max-age=60", .vary: "accept-language, X-Absent"]),
            key: CacheKey(text: "k"),
            requestTime: now,
            responseTime: now
        )
        #expect(made?.varyingRequestHeaders == ["accept-language": "de", "x-absent": ""])
    }

    @Test func notModifiedMergesHeadersAndRestartsTheAge() {
        let stored = entry(
            [
                .cacheControl: "max-age=10", .eTag: "\"a\"", .contentType: "application/json",
                HTTPField.Name("X-Old")!: "1",
            ],
            storedSecondsAgo: 100
        )
        let merged = decision(.http).revalidated(
            stored,
            notModified: [
                .cacheControl: "max-age=60", HTTPField.Name("X-Old")!: "2",
                .contentLength: "0", .date: HTTPDate.format(now),
            ],
            requestTime: now,
            responseTime: now
        )
        #expect(merged.headers[.cacheControl] == "max-age=60" && merged.headers[HTTPField.Name("X-Old")!] == "2")
        #expect(merged.headers[.contentType] == "application/json" && merged.headers[.contentLength] == nil)
        #expect(merged.body == stored.body && merged.storedAt == now && merged.expiresAt == now + 60)
        #expect(decision(.http).lookup(merged, now: now) == .serve(merged, age: .zero))
        #expect(decision(.http).conditionalHeaders(for: stored)[.ifNoneMatch] == "\"a\"")
    }

    @Test(arguments: [
        "http://host/p", "https://api.example.com:8443/v1/Users/Ab%2Fc", "http://host", "http://host/", "HTTP://Host/p",
        "http://HOST:80/p", "http://host/p?b=2&a=1", "http://host/p#f", "http://user:PW@host/p", "http://h/p?",
        "http://[::1]:8080/x", "https://h/a/B/c;d=E",
    ])
    func keysOfNormalURLsSkipTheRebuildAndMatchIt(_ text: String) throws {
        let url = try #require(URL(string: text))
        #expect(CacheKey.normalize(url) == CacheKey.rebuilt(url))
        if CacheKey.isNormal(url.absoluteString) { #expect(CacheKey.rebuilt(url) == url.absoluteString) }
    }

    @Test func keysSortParametersAndIncludeTheNamespaceAndBody() {
        #expect(
            CacheKey.isNormal("http://host:8080/P/q") && !CacheKey.isNormal("http://Host/p")
                && CacheKey.isNormal("http://host/p?A=1")
                && !CacheKey.isNormal("http://host/p?a=1#f")
        )
        let a = CacheKey(url: URL(string: "HTTP://Host/p?a=1&b=2#frag")!)
        let b = CacheKey(url: URL(string: "http://host/p")!, parameters: ["b": 2, "a": 1])
        #expect(a == b && a.text == " GET http://host/p?a=1&b=2")
        // A query given as text is the server's to read: keyed byte for byte (issue 41).
        for (one, other) in [
            ("?q=a+b", "?q=a%2Bb"), ("?x=1&x=2", "?x=2&x=1"), ("?k", "?k="), ("?a=1;b=2", "?a=1%3Bb%3D2"),
            ("?b=2&a=1", "?a=1&b=2"), ("?a=%31", "?a=1"),
        ] {
            #expect(
                CacheKey(url: URL(string: "http://host/p" + one)!)
                    != CacheKey(url: URL(string: "http://host/p" + other)!),
                "\(one) \(other)"
            )
        }
        #expect(CacheKey(url: URL(string: "http://HOST/p?Q=A")!).text == " GET http://host/p?Q=A")
        #expect(CacheKey(url: URL(string: "http://User:PW@HOST/p")!).text == " GET http://User:PW@host/p")
        #expect(
            CacheKey(url: URL(string: "http://host/p")!, namespace: "v2")
                != CacheKey(url: URL(string: "http://host/p")!)
        )
        var post = request(method: .post)
        post.body = .bytes(Data("one".utf8))
        var other = post
        other.body = .bytes(Data("two".utf8))
        #expect(CacheKey(post, namespace: "") != CacheKey(other, namespace: ""))
        other.body = .file(URL(filePath: "/dev/null"), length: 0)
        #expect(CacheKey(other, namespace: "") == nil)
        #expect(a.digest.count == 64)
    }

    @Test func lruOrderTouchesAndRemoves() {
        var order = LRUOrder<Int>()
        for key in 1...4 { order.touch(key) }
        order.touch(2)
        order.remove(3)
        #expect(order.keysOldestFirst == [1, 4, 2] && order.oldest == 1 && order.newest == 2 && order.count == 3)
        order.remove(1)
        order.remove(2)
        order.remove(4)
        #expect(order.oldest == nil && order.newest == nil && order.keysOldestFirst.isEmpty)
    }
}

/// RFC 9111's storage rules that issue 41 found missing, one rule a test.
@Suite("RFC 9111: what is stored, and how a request is matched to it")
struct CacheStorageRuleTests {
    let rules = CacheDecisionTests()

    @Test func fieldsOfOneConnectionAreNeitherStoredNorMerged() throws {
        let headers: HTTPFields = [
            .cacheControl: "max-age=60", .connection: "X-Private, close", HTTPField.Name("X-Private")!: "1",
            HTTPField.Name("Keep-Alive")!: "timeout=5", .te: "trailers", .upgrade: "h2c",
            HTTPField.Name("Proxy-Authenticate")!: "Basic", HTTPField.Name("X-Kept")!: "yes",
        ]
        let stored = try #require(
            rules.decision(.http).entryToStore(
                rules.body(headers),
                key: CacheKey(text: "k"),
                requestTime: rules.now,
                responseTime: rules.now
            )
        )
        #expect(stored.headers.map(\.name.canonicalName).sorted() == ["cache-control", "date", "x-kept"])
        let merged = rules.decision(.http).revalidated(
            stored,
            notModified: [
                .connection: "X-New", HTTPField.Name("X-New")!: "1",
                HTTPField.Name("Keep-Alive")!: "x", .cacheControl: "max-age=90",
            ],
            requestTime: rules.now,
            responseTime: rules.now
        )
        #expect(
            merged.headers[HTTPField.Name("X-New")!] == nil && merged.headers[.connection] == nil
                && merged.headers[.cacheControl] == "max-age=90"
        )
    }

    @Test func mustUnderstandStoresAKnownStatusDespiteNoStoreAndNoUnknownOne() {
        #expect(rules.stores(.http, [.cacheControl: "no-store, must-understand, max-age=60"]))
        #expect(!rules.stores(.http, [.cacheControl: "no-store, must-understand, max-age=60"], status: 299))
        #expect(!rules.stores(.http, [.cacheControl: "no-store, max-age=60"]))
    }

    @Test func statusesCacheableByDefaultOrMadeSoAreStored() {
        #expect(rules.stores(.http, [.cacheControl: "max-age=60"], status: 500))  // explicit freshness
        #expect(!rules.stores(.http, [:], status: 500))
        // heuristically cacheable
        #expect(rules.stores(.http, [.lastModified: HTTPDate.format(rules.now - 3600)], status: 404))
        #expect(rules.stores(.http, [.cacheControl: "public"], status: 599))  // public makes any status storable
        // ... and gives it a heuristic lifetime from Last-Modified.
        let publicOne: HTTPFields = [.cacheControl: "public", .lastModified: HTTPDate.format(rules.now - 36_000)]
        #expect(
            rules.lifetime(HTTPFreshness(options: CacheOptions()), status: 599, headers: publicOne) == .seconds(3600)
        )
    }

    @Test func varyCompareValuesTheWayTheirGrammarAllows() {
        func same(_ name: String, _ one: [String], _ other: [String]) -> Bool {
            CacheDecision.normalized(one, name: name) == CacheDecision.normalized(other, name: name)
        }
        #expect(same("accept-encoding", ["gzip,deflate"], ["deflate,  gzip"]))
        #expect(same("accept-encoding", ["gzip", "br"], ["br, gzip"]))
        #expect(same("accept-language", ["en-US, fr;q=0.5"], ["EN-us,fr ; q=0.5"]))
        #expect(!same("accept-language", ["en, fr"], ["fr, en"]))  // order can mean preference: kept
        #expect(!same("x-custom", ["A"], ["a"]))  // an unknown field's case is kept
        #expect(same("x-custom", ["a,b"], ["a , b"]))
    }
}
