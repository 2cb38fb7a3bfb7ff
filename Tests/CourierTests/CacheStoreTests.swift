import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite("Cache stores: the entry file format, the memory LRU and the disk store")
struct CacheStoreTests {
    static func entry(
        _ name: String,
        bytes: Int = 2000,
        type: String = "application/json",
        storedAt: Date = Date()
    ) -> CacheEntry {
        let text = String(repeating: "{\"name\":\"\(name)\",\"value\":12345},", count: max(1, bytes / 30))
        return CacheEntry(
            key: CacheKey(url: URL(string: "http://h/\(name)")!).text,
            method: "GET",
            url: "http://h/\(name)",
            status: 200,
            headers: [.contentType: type, .eTag: "\"\(name)\""],
            varyingRequestHeaders: ["accept": "x"],
            storedAt: storedAt,
            initialAge: .seconds(3),
            expiresAt: storedAt + 60,
            body: Data(text.utf8)
        )
    }

    static func key(_ name: String) -> CacheKey { CacheKey(url: URL(string: "http://h/\(name)")!) }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-\(UUID().uuidString)")
    }

    @Test func codecRoundTripsCompressedAndRaw() throws {
        let json = Self.entry("a", bytes: 10_000)
        let (file, storedBody, compressed) = CacheEntryCodec.encode(json, compression: CacheCompression())
        #expect(compressed && storedBody < json.body.count / 4)
        #expect(try CacheEntryCodec.decode(file) == json)

        let image = Self.entry("b", bytes: 10_000, type: "image/png")
        #expect(CacheEntryCodec.encode(image, compression: CacheCompression()).isCompressed == false)
        let random = CacheEntry(
            key: "r",
            method: "GET",
            url: "http://h/r",
            status: 200,
            headers: [:],
            storedAt: Date(),
            body: Data((0..<100_000).map { _ in UInt8.random(in: 0...255) })
        )
        let encodedRandom = CacheEntryCodec.encode(random, compression: CacheCompression())
        #expect(!encodedRandom.isCompressed)
        #expect(try CacheEntryCodec.decode(encodedRandom.file) == random)
        #expect(!CacheEntryCodec.encode(json, compression: .none).isCompressed)
    }

    @Test func everyTruncationAndSampledFlipIsRefused() throws {
        let (file, _, _) = CacheEntryCodec.encode(Self.entry("a", bytes: 3000), compression: CacheCompression())
        for length in 0..<file.count {
            #expect(throws: CacheEntryCodec.Corrupt.self) { try CacheEntryCodec.decode(file.prefix(length)) }
        }
        for position in stride(from: 0, to: file.count, by: 7) {
            var flipped = file
            flipped[position] ^= 0x5a
            #expect(throws: CacheEntryCodec.Corrupt.self) { try CacheEntryCodec.decode(flipped) }
        }
        var longer = file
        longer.append(0)
        #expect(throws: CacheEntryCodec.Corrupt.self) { try CacheEntryCodec.decode(longer) }
    }

    @Test func memoryStoreEvictsLeastRecentlyUsedByCountAndBytes() async {
        let store = MemoryCacheStore(maxBytes: 1_000_000, maxCount: 3)
        for name in ["a", "b", "c"] { await store.store(Self.entry(name)) }
        _ = await store.entry(for: Self.key("a"))
        await store.store(Self.entry("d"))
        #expect(await store.entry(for: Self.key("b")) == nil)
        #expect(await store.entry(for: Self.key("a")) != nil)
        #expect(await store.statistics().entryCount == 3)

        let small = MemoryCacheStore(maxBytes: 5000, maxCount: 100, cost: { $0.body.count })
        for name in ["a", "b", "c", "d"] { await small.store(Self.entry(name, bytes: 2000)) }
        let stats = await small.statistics()
        #expect(stats.storedBytes <= 5000 && stats.entryCount == 2)
        await small.store(Self.entry("huge", bytes: 10_000))
        #expect(await small.entry(for: Self.key("huge")) == nil)
        #expect(await small.removeAll() == 2)
    }

    @Test func diskStoreStoresReadsAndRebuildsItsIndex() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory)
        for name in ["a", "b", "c"] { await store.store(Self.entry(name, bytes: 5000)) }
        #expect(
            await store.entry(for: Self.key("b"))
                == Self.entry("b", bytes: 5000).withStoredAt(of: await store.entry(for: Self.key("b")))
        )
        let stats = await store.statistics()
        #expect(stats.entryCount == 3 && stats.compressionRatio > 4)

        let attributes = try FileManager.default.attributesOfItem(atPath: directory.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o700)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let mode =
                try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)[
                    .posixPermissions
                ] as? Int
            #expect(mode == 0o600, "\(name)")
        }

        let reopened = try DiskCacheStore(directory: directory)
        #expect(await reopened.statistics() == stats)
        #expect(await reopened.entry(for: Self.key("c"))?.body == Self.entry("c", bytes: 5000).body)
        #expect(await reopened.removeEntries { $0.url.hasSuffix("/a") } == 1)
        #expect(await reopened.summaries().count == 2)
    }

    @Test func damagedFilesAreMissesAndRemovedTheRestIntact() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory)
        let names = ["trunc", "flip", "foreign", "empty", "fine"]
        for name in names { await store.store(Self.entry(name)) }
        func file(_ name: String) -> URL { directory.appendingPathComponent(Self.key(name).digest + ".entry") }
        let truncated = try Data(contentsOf: file("trunc"))
        try truncated.prefix(truncated.count / 2).write(to: file("trunc"))
        var flipped = try Data(contentsOf: file("flip"))
        flipped[flipped.count - 5] ^= 1
        try flipped.write(to: file("flip"))
        try FileManager.default.removeItem(at: file("foreign"))
        try FileManager.default.copyItem(at: file("fine"), to: file("foreign"))  // a whole file, of another key
        try Data().write(to: file("empty"))

        for name in names.dropLast() {
            #expect(await store.entry(for: Self.key(name)) == nil, "\(name)")
            #expect(!FileManager.default.fileExists(atPath: file(name).path), "\(name)")
        }
        #expect(await store.entry(for: Self.key("fine"))?.body == Self.entry("fine").body)

        // A damaged access order only loses the order.
        try Data([0xff, 0x00, 0x0a, 0x41]).write(to: directory.appendingPathComponent("access-order"))
        #expect(try await DiskCacheStore(directory: directory).entry(for: Self.key("fine")) != nil)

        // The same damage found when the store opens.
        await store.store(Self.entry("later"))
        try Data("garbage".utf8).write(to: file("later"))
        try Data("left by a crash".utf8).write(to: directory.appendingPathComponent(".x.entry.123.tmp"))
        let reopened = try DiskCacheStore(directory: directory)
        #expect(await reopened.summaries().map(\.url) == ["http://h/fine"])
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent(".x.entry.123.tmp").path))
    }

    @Test func evictionKeepsTheStoreUnderItsLimitLeastRecentlyUsedFirst() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory, maxBytes: 20_000, compression: .none)
        for index in 0..<10 {
            await store.store(Self.entry("e\(index)", bytes: 3000))
            _ = await store.entry(for: Self.key("e0"))  // keep e0 in use
        }
        let stats = await store.statistics()
        #expect(stats.storedBytes <= 20_000 && stats.entryCount >= 4)
        #expect(await store.entry(for: Self.key("e0")) != nil)
        #expect(await store.entry(for: Self.key("e1")) == nil)
        await store.flush()
        let reopened = try DiskCacheStore(directory: directory, maxBytes: 20_000, compression: .none)
        #expect(await reopened.statistics().storedBytes == stats.storedBytes)

        let aged = try DiskCacheStore(directory: Self.temporaryDirectory(), maxAge: .seconds(60))
        await aged.store(Self.entry("old", storedAt: Date() - 120))
        #expect(await aged.entry(for: Self.key("old")) == nil)
    }

    @Test func aFailingDiskNeverFailsAndLogsAWarning() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory)
        try FileManager.default.removeItem(at: directory)  // writes now fail: the directory is gone
        await store.store(Self.entry("a"))
        #expect(await store.entry(for: Self.key("a")) == nil)
        #expect(await store.statistics().entryCount == 0)
        #expect(throws: CourierError.self) { try DiskCacheStore(directory: URL(filePath: "/proc/courier-cache")) }
    }

    @Test func manyTasksReadAndWriteAtOnce() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = ResponseCache(
            memory: MemoryCacheStore(maxCount: 20),
            disk: try DiskCacheStore(directory: directory, maxBytes: 200_000)
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<16 {
                group.addTask {
                    for round in 0..<40 {
                        let name = "k\((worker * 7 + round) % 50)"
                        if round % 3 == 0 {
                            await cache.store(Self.entry(name, bytes: 1500))
                        } else if let found = await cache.lookup(Self.key(name)) {
                            #expect(found.body == Self.entry(name, bytes: 1500).body)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let stats = await cache.statistics()
        #expect(stats.bytesOnDisk <= 200_000 && stats.entryCount > 0)
        #expect(stats.summary.contains("entries"))
    }

    @Test func defaultDirectoryFollowsXDG() {
        #expect(
            DiskCacheStore.defaultDirectory(environment: ["XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u"]).path
                == "/x/cache/courier"
        )
        #expect(
            DiskCacheStore.defaultDirectory(environment: ["XDG_CACHE_HOME": "relative", "HOME": "/home/u"]).path
                == "/home/u/.cache/courier"
        )
    }
}

extension CacheEntry {
    /// This entry with `other`'s stored-at time, to compare everything else.
    func withStoredAt(of other: CacheEntry?) -> CacheEntry {
        var copy = self
        copy.storedAt = other?.storedAt ?? storedAt
        copy.expiresAt = other?.expiresAt ?? expiresAt
        return copy
    }
}
