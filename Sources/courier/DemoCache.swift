import Courier
import CourierTesting
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DemoTour {
    /// The cache's part of the tour: a hit, a 304 revalidation, a fallback when the server fails, and the
    /// statistics of a zlib-compressed disk cache in a temporary directory.
    mutating func cacheSteps() async throws {
        let server = self.server
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-demo-cache-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = ResponseCache(disk: try DiskCacheStore(directory: directory))
        try await withSession(
            Configuration {
                $0.baseURL = server.baseURL
                $0.cache = cache
                $0.cachePolicy = .http
            }
        ) { session in
            await check("A fresh cached answer needs no network") {
                let path = "/cache/demo-fresh?cache-control=max-age=60"
                let first = try await session.send(Request<Data>.get(path))
                let second = try await session.send(Request<Data>.get(path))
                let hits = server.hits("/cache/demo-fresh")
                return (
                    !first.isFromCache && second.isFromCache && hits == 1,
                    "max-age=60: 2 GETs → \(hits) server hit; the second came from the cache, \(Self.age(second)) old"
                )
            }
            await check("A stale answer is revalidated with ETag and a 304") {
                let path = "/cache/demo-304?cache-control=no-cache"
                _ = try await session.send(Request<Data>.get(path))
                let again = try await session.send(Request<Data>.get(path))
                return (
                    again.cacheInfo.wasRevalidated && again.status == .ok,
                    "no-cache: the second GET sent If-None-Match, got 304, and returned the cached \(again.body.count) bytes as 200"
                )
            }
            await check("When the server fails, network-else-cache answers from the cache") {
                let request = Request<Data>.get("/cache/demo-down?fail-after=1").cachePolicy(.networkElseCache)
                _ = try await session.send(request)
                let fallback = try await session.send(request)
                return (fallback.isFromCache, "the server answered 503; the cached answer came back instead")
            }
            await check("The disk cache compresses with zlib and counts hits") {
                let big = try await session.send(Request<Data>.get("/gzip").cachePolicy(.cacheElseNetwork()))
                let stats = await cache.statistics()
                let disk = stats.disk ?? CacheStoreStatistics()
                return (
                    stats.entryCount >= 4 && stats.hits >= 3 && !big.isFromCache,
                    "\(stats.summary); bodies \(ByteCount.format(disk.bodyBytes)) stored in \(ByteCount.format(disk.storedBodyBytes))"
                )
            }
        }
    }

    private static func age(_ response: Response<Data>) -> String {
        (response.cacheInfo.age ?? .zero).formattedSeconds
    }
}
