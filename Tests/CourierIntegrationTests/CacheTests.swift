import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// What `/cache/NAME` answers.
struct CacheAnswer: Decodable, Sendable {
    var path: String
    var served: Int
    var varied: String
}

/// Runs `body` with a loopback server and a session with a memory cache (and a disk cache in `directory`).
func withCachingSession<T>(
    directory: URL? = nil,
    policy: CachePolicy = .http,
    options: CacheOptions = CacheOptions(),
    _ body: (Session, TestServer) async throws -> T
) async throws -> T {
    let disk = try directory.map { try DiskCacheStore(directory: $0) }
    return try await withServerSession(
        {
            $0.cache = ResponseCache(disk: disk, options: options)
            $0.cachePolicy = policy
        },
        body
    )
}

@Suite("Response cache over the loopback server", .timeLimit(.minutes(2)))
struct CacheTests {
    func get(
        _ session: Session,
        _ path: String,
        _ policy: CachePolicy? = nil,
        headers: HTTPFields = [:]
    ) async throws -> Response<CacheAnswer> {
        var request = Request<CacheAnswer>.get(path, headers: headers)
        request.cachePolicy = policy
        return try await session.send(request)
    }

    /// The management API reads one entry with its body and removes one by method, URL and parameters, leaving
    /// the same URL's entries with other parameters.
    @Test func oneEntryIsReadWithItsBodyAndRemovedByMethodURLAndParameters() async throws {
        try await withCachingSession(policy: .cacheElseNetwork(ttl: .seconds(60))) { session, server in
            for page in [1, 2] {
                _ = try await session.send(Request<CacheAnswer>.get("/cache/pages", query: ["page": .int(page)]))
            }
            let cache = try #require(session.cache)
            let url = server.url("/cache/pages")
            let first = try #require(await cache.entry(url: url, parameters: ["page": 1]))
            #expect(first.status == 200 && !first.body.isEmpty)
            #expect(await cache.remove(method: .get, url: url, parameters: ["page": 1]))
            #expect(await cache.entry(url: url, parameters: ["page": 1]) == nil)
            #expect(await cache.entry(url: url, parameters: ["page": 2]) != nil, "the other parameters' entry stays")
            #expect(await !cache.remove(method: .get, url: url, parameters: ["page": 1]), "nothing left to remove")
        }
    }

    /// Every stored answer of a URL, whatever its parameters, is read as a value (status, headers and body),
    /// newest first, from the disk once the memory is purged as well.
    @Test func theAnswersOfAURLAreReadAsValuesWithTheirBodies() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-cache-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = ResponseCache(disk: try DiskCacheStore(directory: directory))
        try await withServerSession({
            $0.cache = cache
            $0.cachePolicy = .cacheElseNetwork(ttl: .seconds(60))
        }) { session, server in
            var bodies: [Data] = []
            for page in [1, 2] {
                let response = try await session.send(Request<Data>.get("/cache/read", query: ["page": .int(page)]))
                bodies.append(response.value)
            }
            _ = try await session.send(Request<Data>.get("/cache/other"))
            await cache.purgeMemory()
            let answers = await cache.answers(url: server.url("/cache/read"))
            #expect(answers.count == 2)
            #expect(answers.map(\.body) == bodies.reversed(), "newest first, each with the body the server sent")
            #expect(answers.allSatisfy { $0.status == 200 && $0.headers[.contentType] != nil })
            #expect(answers.map(\.url).allSatisfy { $0.contains("/cache/read?page=") })
            #expect(await cache.answers(url: server.url("/cache/none")).isEmpty)
        }
    }

    @Test func cacheElseNetworkAnswersFromTheCacheUntilTheTTL() async throws {
        try await withCachingSession(policy: .cacheElseNetwork(ttl: .milliseconds(300))) { session, server in
            let first = try await get(session, "/cache/ttl?etag=none&last-modified=none")
            let second = try await get(session, "/cache/ttl?etag=none&last-modified=none")
            #expect(!first.isFromCache && first.cacheInfo.wasStored)
            #expect(second.isFromCache && second.value.served == 1)
            try await Task.sleep(for: .milliseconds(400))
            let third = try await get(session, "/cache/ttl?etag=none&last-modified=none")
            #expect(!third.isFromCache && third.value.served == 2)
            #expect(server.hits("/cache/ttl") == 2)
        }
    }

    @Test func anExpiredEntryWithAValidatorIsRevalidated() async throws {
        try await withCachingSession(policy: .cacheElseNetwork(ttl: .milliseconds(100))) { session, server in
            _ = try await get(session, "/cache/revalidate")
            try await Task.sleep(for: .milliseconds(150))
            let again = try await get(session, "/cache/revalidate")
            #expect(
                again.isFromCache && again.cacheInfo.wasRevalidated && again.value.served == 1 && again.status == .ok
            )
            #expect(server.hits("/cache/revalidate") == 2)
            let stats = await session.cache?.statistics()
            #expect(stats?.revalidations == 1)
        }
    }

    @Test func networkElseCacheFallsBackWhenTheNetworkFails() async throws {
        try await withCachingSession(policy: .networkElseCache) { session, server in
            let first = try await get(session, "/cache/fallback?fail-after=1")
            let second = try await get(session, "/cache/fallback?fail-after=1")
            #expect(!first.isFromCache && second.isFromCache && second.value.served == 1)
            #expect(server.hits("/cache/fallback") == 2)
            // A failure of the request itself (a 404) is not a network failure: no fallback.
            let error = await courierError { _ = try await get(session, "/cache/missing?status=404") }
            #expect(error?.code == .httpStatus)
        }
    }

    @Test func cacheOnlyMissesThenHits() async throws {
        try await withCachingSession { session, server in
            let miss = await courierError { _ = try await get(session, "/cache/only", .cacheOnly) }
            #expect(miss?.code == .cacheMiss)
            #expect(server.hits("/cache/only") == 0)
            _ = try await get(session, "/cache/only", .networkElseCache)
            let hit = try await get(session, "/cache/only", .cacheOnly)
            #expect(hit.isFromCache && server.hits("/cache/only") == 1)
        }
    }

    @Test func cacheThenNetworkYieldsTheCachedAnswerThenTheFreshOne() async throws {
        try await withCachingSession { session, server in
            var first: [Response<CacheAnswer>] = []
            for try await response in session.responses(for: Request<CacheAnswer>.get("/cache/both")) {
                first.append(response)
            }
            #expect(first.count == 1 && !first[0].isFromCache)
            var second: [Response<CacheAnswer>] = []
            for try await response in session.responses(for: Request<CacheAnswer>.get("/cache/both")) {
                second.append(response)
            }
            #expect(second.map(\.isFromCache) == [true, false])
            #expect(second.map(\.value.served) == [1, 2])
        }
    }

    @Test func httpMaxAgeNoStoreAndNoCache() async throws {
        try await withCachingSession { session, server in
            for _ in 0..<3 { _ = try await get(session, "/cache/fresh?cache-control=max-age=60") }
            #expect(server.hits("/cache/fresh") == 1)
            for _ in 0..<3 { _ = try await get(session, "/cache/nostore?cache-control=no-store") }
            #expect(server.hits("/cache/nostore") == 3)
            _ = try await get(session, "/cache/nocache?cache-control=no-cache")
            let revalidated = try await get(session, "/cache/nocache?cache-control=no-cache")
            #expect(
                revalidated.cacheInfo.wasRevalidated && revalidated.value.served == 1
                    && server.hits("/cache/nocache") == 2
            )
            let expired = try await get(session, "/cache/expires?expires=0&etag=none&last-modified=none")
            let again = try await get(session, "/cache/expires?expires=0&etag=none&last-modified=none")
            #expect(!expired.isFromCache && !again.isFromCache && again.value.served == 2)
        }
    }

    @Test func varyMatchAndMismatch() async throws {
        try await withCachingSession { session, server in
            let path = "/cache/vary?cache-control=max-age=60&vary=Accept-Language"
            let french = try await get(session, path, headers: [.acceptLanguage: "fr"])
            let frenchAgain = try await get(session, path, headers: [.acceptLanguage: "fr"])
            let german = try await get(session, path, headers: [.acceptLanguage: "de"])
            #expect(french.value.varied == "fr" && frenchAgain.isFromCache && frenchAgain.value.varied == "fr")
            #expect(!german.isFromCache && german.value.varied == "de")
            #expect(server.hits("/cache/vary") == 2)
        }
    }

    @Test func aNotModifiedAnswerMergesItsHeaders() async throws {
        try await withCachingSession { session, server in
            _ = try await get(session, "/cache/merge?cache-control=max-age=0")
            let merged = try await get(session, "/cache/merge?cache-control=max-age=0")
            #expect(merged.cacheInfo.wasRevalidated && merged.headers[.contentType] == "application/json")
            #expect(merged.headers[.date] != nil && merged.value.served == 1)
        }
    }

    @Test func staleIfErrorAnswersAFailingServer() async throws {
        try await withCachingSession { session, server in
            let path = "/cache/sie?cache-control=max-age=0,stale-if-error=60&etag=none&last-modified=none&fail-after=1"
            _ = try await get(session, path)
            let stale = try await get(session, path)
            #expect(stale.isFromCache && stale.value.served == 1 && server.hits("/cache/sie") == 2)
            let strict = "/cache/strict?cache-control=max-age=0&etag=none&last-modified=none&fail-after=1"
            _ = try await get(session, strict)
            let error = await courierError { _ = try await get(session, strict) }
            #expect(error?.status?.code == 503)
        }
    }

    @Test func staleWhileRevalidateAnswersAtOnceAndRefreshesBehind() async throws {
        try await withCachingSession { session, server in
            let path = "/cache/swr?cache-control=max-age=0,stale-while-revalidate=60"
            _ = try await get(session, path)
            let stale = try await get(session, path)
            #expect(stale.isFromCache && !stale.cacheInfo.wasRevalidated)
            await eventually("the background revalidation reached the server") { server.hits("/cache/swr") == 2 }
        }
    }

    @Test func staleAnswersRefreshOncePerKeyEvenWithoutCoalescing() async throws {
        try await withServerSession({
            $0.cache = ResponseCache()
            $0.cachePolicy = .http
            $0.scheduling.coalescesRequests = false
        }) { session, server in
            let path = "/cache/swr-once?cache-control=max-age=0,stale-while-revalidate=60&delay=500"
            _ = try await get(session, path)
            for _ in 0..<5 {
                let stale = try await get(session, path)
                #expect(stale.isFromCache)
            }
            await eventually("the refresh ended") {
                await session.pool.taskCount == 0 && server.hits("/cache/swr-once") >= 2
            }
            #expect(server.hits("/cache/swr-once") == 2, "five stale answers started one refresh, not five")
        }
    }

    @Test func shuttingDownEndsARefreshInFlight() async throws {
        // A transport whose revalidations never answer and whose shutdown does nothing: only the session itself
        // can end the refresh it started.
        let calls = Locked(0)
        let stub = StubTransport { request in
            let call = calls.withLock { count in
                count += 1
                return count
            }
            if call > 1 { try await Task.sleep(for: .seconds(3600)) }
            return StubTransport.Answer(
                headers: [.cacheControl: "max-age=0, stale-while-revalidate=60", .eTag: "\"v1\""],
                body: Data(#"{"path":"/","served":1,"varied":""}"#.utf8)
            )
        }
        let session = Session(
            configuration: Configuration {
                $0.baseURL = URL(string: "http://stub.invalid")
                $0.cache = ResponseCache()
                $0.cachePolicy = .http
            },
            transport: stub
        )
        _ = try await get(session, "/swr")
        #expect(try await get(session, "/swr").isFromCache)  // stale: the refresh starts and hangs
        await eventually("the refresh is in flight") { calls.withLock { $0 } == 2 }
        try await session.shutdown()
        #expect(await session.pool.taskCount == 0, "the refresh outlived the session that started it")
    }

    @Test func aSuccessfulPostInvalidatesTheCachedGet() async throws {
        try await withCachingSession { session, server in
            _ = try await get(session, "/cache/item?cache-control=max-age=600")
            #expect(try await get(session, "/cache/item?cache-control=max-age=600").isFromCache)
            _ = try await session.send(
                Request<Data>.post("/cache/item?cache-control=max-age=600", body: .json(["name": "new"]))
            )
            #expect(try await !get(session, "/cache/item?cache-control=max-age=600").isFromCache)
            // Also when the POST itself runs under a time-to-live policy.
            #expect(try await get(session, "/cache/item?cache-control=max-age=600").isFromCache)
            let post = Request<Data>.post("/cache/item?cache-control=max-age=600", body: .json(["name": "newer"]))
                .cachePolicy(.cacheElseNetwork())
            _ = try await session.send(post)
            #expect(try await !get(session, "/cache/item?cache-control=max-age=600").isFromCache)
        }
    }

    @Test func partialAndAuthorizedAnswersAreNotStored() async throws {
        try await withCachingSession { session, server in
            for _ in 0..<2 { _ = try? await get(session, "/cache/partial?status=206&cache-control=max-age=60") }
            #expect(server.hits("/cache/partial") == 2)
            for _ in 0..<2 {
                _ = try await get(
                    session,
                    "/cache/private?cache-control=max-age=60",
                    headers: [.authorization: "Bearer t"]
                )
            }
            #expect(server.hits("/cache/private") == 2)
            for _ in 0..<2 {
                _ = try await get(
                    session,
                    "/cache/public?cache-control=max-age=60,public",
                    headers: [.authorization: "Bearer t"]
                )
            }
            #expect(server.hits("/cache/public") == 1)
        }
    }

    @Test func theDiskCacheSurvivesASessionAndTheManagementAPIWorks() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-cache-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let url = server.url("/cache/kept?cache-control=max-age=600")
            func session(_ body: (Session) async throws -> Void) async throws {
                let cache = ResponseCache(
                    disk: try DiskCacheStore(directory: directory),
                    options: CacheOptions(namespace: "v1")
                )
                try await withSession(Configuration { $0.cache = cache }) { try await body($0) }
            }
            try await session { _ = try await $0.send(Request<CacheAnswer>.get(url.absoluteString)) }
            try await session { session in
                let again = try await session.send(Request<CacheAnswer>.get(url.absoluteString))
                #expect(again.isFromCache && server.hits("/cache/kept") == 1)
                let cache = try #require(session.cache)
                // The request's query was text, so it is looked up as written (a dictionary escapes the `=`).
                #expect(await cache.entry(url: url) != nil)
                #expect(await cache.entries(url: server.url("/cache/kept")).count == 1)
                let stats = await cache.statistics()
                #expect(stats.entryCount == 1 && stats.hits == 1 && stats.bytesOnDisk > 0)
                // The hit above put the entry in memory too: purging empties memory and leaves the disk.
                #expect(await cache.statistics().memory?.entryCount == 1)
                await cache.purgeMemory()
                #expect(await cache.statistics().memory?.entryCount == 0)
                #expect(await cache.statistics().disk?.entryCount == 1)
                #expect(await cache.entries().count == 1)
                let fromDisk = try await session.send(Request<CacheAnswer>.get(url.absoluteString))
                #expect(fromDisk.isFromCache && server.hits("/cache/kept") == 1)
                #expect(await cache.statistics().memory?.entryCount == 1)  // promoted again
                #expect(await cache.removeAll(url: server.url("/cache/kept")) == 1)
                #expect(await cache.statistics().entryCount == 0)
            }
        }
    }

    @Test func aFailingDiskLogsAWarningAndTheRequestSucceeds() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-cache-\(UUID().uuidString)"
        )
        let logs = CapturedLogs()
        let disk = try DiskCacheStore(directory: directory, logger: logs.logger())
        try FileManager.default.removeItem(at: directory)  // every write fails from now on
        try await withServerSession({
            $0.cache = ResponseCache(memory: nil, disk: disk)
            $0.cachePolicy = .cacheElseNetwork()
        }) { session, server in
            let first = try await get(session, "/cache/diskfull")
            let second = try await get(session, "/cache/diskfull")
            #expect(!first.isFromCache && !second.isFromCache && second.value.served == 2)
            #expect(logs.all.contains("warning: the cache could not store an entry"))
        }
    }

    @Test func bumpingTheNamespaceMissesEverything() async throws {
        try await withTestServer { server in
            let cache = ResponseCache()
            let path = server.url("/cache/ns?cache-control=max-age=600").absoluteString
            try await withSession(Configuration { $0.cache = cache }) {
                _ = try await $0.send(Request<CacheAnswer>.get(path))
            }
            let bumped = ResponseCache(memory: cache.memory, options: CacheOptions(namespace: "v2"))
            let response = try await withSession(Configuration { $0.cache = bumped }) {
                try await $0.send(Request<CacheAnswer>.get(path))
            }
            #expect(!response.isFromCache && server.hits("/cache/ns") == 2)
        }
    }
}
