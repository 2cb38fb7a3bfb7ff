import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// The `http` policy as RFC 9111 has it, over the loopback server (issue 41's table; the pure rules are in
/// `CacheDecisionTests` and `CacheNumbersTests`).
@Suite("RFC 9111 over the wire", .timeLimit(.minutes(1)))
struct CacheRFC9111Tests {
    func get(_ session: Session, _ path: String, headers: HTTPFields = [:]) async throws -> Response<Data> {
        try await session.send(Request<Data>.get(path, headers: headers).cachePolicy(.http))
    }

    /// A 302 with no freshness to a 200 with `max-age=3600`: the 200 is stored under its own URL, which is then
    /// a hit, and the URL that redirected is asked again (it had been answered from the cache with the other
    /// URL's body, and the other URL's own request was a miss).
    @Test func aRedirectsAnswerIsStoredUnderItsOwnURL() async throws {
        try await withCachingSession { session, server in
            let target = server.url("/cache/target?cache-control=max-age=3600").absoluteString
            let redirecting =
                "/redirect-to?url=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
            let first = try await get(session, redirecting)
            #expect(first.status == .ok && !first.cacheInfo.isFromCache)
            let again = try await get(session, redirecting)
            #expect(!again.cacheInfo.isFromCache, "the URL that redirected is asked again")
            #expect(server.requests("/redirect-to").count == 2)
            let direct = try await get(session, "/cache/target?cache-control=max-age=3600")
            #expect(direct.cacheInfo.isFromCache, "the answer is stored under its own URL")
        }
    }

    @Test func aCachedAnswerCarriesItsCurrentAgeAlsoAfterA304() async throws {
        try await withCachingSession { session, _ in
            // No Age from the server, but a Date 100 s old: the answer is 100 s old when it arrives (§4.2.3).
            _ = try await get(session, "/cache/aged?cache-control=max-age=600&date-ago=100")
            let cached = try await get(session, "/cache/aged?cache-control=max-age=600&date-ago=100")
            let age = try #require(cached.headers[.age].flatMap(Int.init))
            #expect(cached.cacheInfo.isFromCache && age >= 100 && age < 110 && cached.headers[values: .age].count == 1)
            #expect(cached.cacheInfo.age.map { Int($0.components.seconds) } == age)
            // Revalidated (max-age=0 makes it stale at once): the merged answer's Age restarts from the 304's.
            _ = try await get(session, "/cache/reval?cache-control=max-age=0&age=7")
            let merged = try await get(session, "/cache/reval?cache-control=max-age=0&age=7")
            #expect(
                merged.cacheInfo.wasRevalidated
                    && merged.headers[.age].flatMap(Int.init).map { $0 >= 7 && $0 < 17 } == true
            )
        }
    }

    /// RFC 9110 §14 and RFC 9111 §3.3–3.4 over the wire: a stored complete answer serves a range, a stored part
    /// serves a range inside it, and parts of one version combine into the whole, which then answers a plain GET.
    @Test func partialContentIsStoredCombinedAndServed() async throws {
        try await withCachingSession { session, server in
            let file = "/file/1000?cache-control=max-age=600"
            _ = try await get(session, file + "&key=whole")
            let slice = try await get(session, file + "&key=whole", headers: [.range: "bytes=100-199"])
            #expect(slice.status == .partialContent && slice.cacheInfo.isFromCache)
            #expect(slice.body == ServerFiles.data(offset: 100, count: 100))
            #expect(slice.headers[.contentRange] == "bytes 100-199/1000")
            #expect(server.hits("/file/1000") == 1)

            let parts = "/file/2000?cache-control=max-age=600"
            let first = try await get(session, parts, headers: [.range: "bytes=0-999"])
            #expect(first.status == .partialContent && !first.cacheInfo.isFromCache && first.cacheInfo.wasStored)
            let inside = try await get(session, parts, headers: [.range: "bytes=10-19"])
            #expect(inside.cacheInfo.isFromCache && inside.body == ServerFiles.data(offset: 10, count: 10))
            #expect(server.hits("/file/2000") == 1)
            // Not a range: the part cannot answer it, so the server is asked (and its 200 stored).
            let whole = try await get(session, parts)
            #expect(whole.status == .ok && !whole.cacheInfo.isFromCache && server.hits("/file/2000") == 2)

            let halves = "/file/3000?cache-control=max-age=600"
            _ = try await get(session, halves, headers: [.range: "bytes=0-1499"])
            _ = try await get(session, halves, headers: [.range: "bytes=1500-"])
            let combined = try await get(session, halves)
            #expect(combined.status == .ok && combined.cacheInfo.isFromCache)
            #expect(combined.body == ServerFiles.data(count: 3000) && server.hits("/file/3000") == 2)
        }
    }

    @Test func fieldsOfOneConnectionAreNotStored() async throws {
        try await withCachingSession { session, server in
            let path =
                "/cache/hop?cache-control=max-age=600&headers=Connection:X-Private|X-Private:1|Keep-Alive:timeout=5|Proxy-Note:x|X-Kept:yes"
            _ = try await get(session, path)
            let entry = try #require(await session.cache?.entry(url: server.url(path)))
            for name in ["Connection", "X-Private", "Keep-Alive", "Proxy-Note"] {
                #expect(entry.headers[HTTPField.Name(name)!] == nil, "\(name)")
            }
            #expect(entry.headers[HTTPField.Name("X-Kept")!] == "yes")
        }
    }

    @Test func variantsOfOneURLAreKeptSideBySide() async throws {
        try await withCachingSession { session, server in
            let path = "/cache/variants?cache-control=max-age=600&vary=Accept-Language"
            for language in ["en", "fr", "en", "fr", "EN"] {
                _ = try await get(session, path, headers: [.acceptLanguage: language])
            }
            #expect(server.hits("/cache/variants") == 2)  // en and fr once each; EN is en (case-insensitive)
            // White space and list order of Accept-Encoding mean nothing.
            let encoded = "/cache/encodings?cache-control=max-age=600&vary=Accept-Encoding"
            _ = try await get(session, encoded, headers: [.acceptEncoding: "gzip,deflate"])
            let same = try await get(session, encoded, headers: [.acceptEncoding: "deflate,  gzip"])
            #expect(same.cacheInfo.isFromCache && server.hits("/cache/encodings") == 1)
        }
    }

    @Test func anErrorWithExplicitFreshnessIsStoredAndReused() async throws {
        try await withCachingSession { session, server in
            for _ in 0..<2 {
                let error = await courierError {
                    _ = try await get(session, "/cache/broken?status=500&cache-control=max-age=600")
                }
                #expect(error?.status?.code == 500)
            }
            #expect(server.hits("/cache/broken") == 1)
            // Without explicit freshness a 500 is not stored, and stale-if-error still answers from the good entry.
            _ = try await get(
                session,
                "/cache/sie?cache-control=max-age=0,stale-if-error=600&fail-after=1&etag=none&last-modified=none"
            )
            let rescued = try await get(
                session,
                "/cache/sie?cache-control=max-age=0,stale-if-error=600&fail-after=1&etag=none&last-modified=none"
            )
            #expect(rescued.cacheInfo.isFromCache && rescued.status == .ok)
        }
    }

    @Test func anySuccessfulUnsafeMethodInvalidatesTheURLAndItsLocationsButAFailureDoesNot() async throws {
        try await withCachingSession { session, server in
            let page = "/cache/page?cache-control=max-age=600"
            let other = "/cache/other?cache-control=max-age=600"
            func cached(_ path: String) async -> Bool { await session.cache?.entry(url: server.url(path)) != nil }
            _ = try await get(session, page)
            _ = try await get(session, other)
            // A failed unsafe request (5xx) changes nothing on the server, so it invalidates nothing.
            _ = try? await session.send(
                Request<Data>(method: .post, path: page + "&status=500").cachePolicy(.networkOnly)
            )
            #expect(await cached(page))
            // An extension method is unsafe too; the answer's Location and Content-Location on the same origin go as well.
            let purge = Request<Data>(method: HTTPRequest.Method("PURGE")!, path: page)
            _ = try await session.send(purge)
            #expect(await !cached(page))
            _ = try await get(session, page)
            let location =
                server.url(other).absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            _ = try await session.send(Request<Data>.post("/cache/post?headers=Content-Location:\(location)"))
            let otherKept = await cached(other)
            let pageKept = await cached(page)
            #expect(!otherKept && pageKept)
        }
    }
}
