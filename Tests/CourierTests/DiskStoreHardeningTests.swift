import Foundation
import HTTPTypes
import Testing

@testable import Courier

#if canImport(Glibc)
import Glibc
#endif

/// Whatever another user or a planted file puts in the cache directory, the disk store neither hangs, nor reads
/// more than it writes, nor serves what it did not write (issue 41).
@Suite("Disk store: planted files, forged entries, shared directories", .timeLimit(.minutes(1)))
struct DiskStoreHardeningTests {
    func file(_ directory: URL, _ name: String) -> String {
        directory.appendingPathComponent(CacheStoreTests.key(name).digest + ".entry").path
    }

    @Test func aFIFOASymlinkAndAHugeFileAreMissesAndNeverHangOrFlood() async throws {
        let directory = CacheStoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory, maxBytes: 1 << 20)
        for name in ["fifo", "link", "huge"] { await store.store(CacheStoreTests.entry(name)) }
        unlink(file(directory, "fifo"))
        #expect(mkfifo(file(directory, "fifo"), 0o600) == 0)
        unlink(file(directory, "link"))
        let outside = directory.deletingLastPathComponent().appendingPathComponent("outside-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: outside) }
        try CacheEntryCodec.encode(CacheStoreTests.entry("link"), compression: .none).file.write(to: outside)
        #expect(symlink(outside.path, file(directory, "link")) == 0)
        #expect(truncate(file(directory, "huge"), 2 << 30) == 0)  // sparse: 2 GiB that cost no disk
        for name in ["fifo", "link", "huge"] {
            #expect(await store.entry(for: CacheStoreTests.key(name)) == nil, "\(name)")
        }

        // A store opened on such a directory skips them as well.
        for name in ["fifo", "huge"] { unlink(file(directory, name)) }
        #expect(mkfifo(file(directory, "fifo"), 0o600) == 0)
        #expect(FileManager.default.createFile(atPath: file(directory, "huge"), contents: nil))
        #expect(truncate(file(directory, "huge"), 2 << 30) == 0)
        let reopened = try DiskCacheStore(directory: directory, maxBytes: 1 << 20)
        #expect(await reopened.statistics().entryCount == 0)
    }

    @Test func anEntryNotSealedWithTheStoresKeyIsAMiss() async throws {
        let directory = CacheStoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCacheStore(directory: directory)
        let genuine = CacheStoreTests.entry("genuine")
        await store.store(genuine)
        #expect(await store.entry(for: CacheStoreTests.key("genuine")) == genuine)
        // A forger who can write the directory but not read the key: a well-formed file with a plain digest.
        var forged = CacheStoreTests.entry("genuine")
        forged.body = Data("{\"evil\":true}".utf8)
        try CacheEntryCodec.encode(forged, compression: .none).file.write(to: URL(filePath: file(directory, "genuine")))
        #expect(await store.entry(for: CacheStoreTests.key("genuine")) == nil)
        // The key is the owner's alone.
        let attributes = try FileManager.default.attributesOfItem(
            atPath: directory.appendingPathComponent("sealing-key").path
        )
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // Another store on the same directory shares the key and reads what the first wrote.
        await store.store(genuine)
        #expect(await (try DiskCacheStore(directory: directory)).entry(for: CacheStoreTests.key("genuine")) == genuine)
    }

    @Test func aDirectoryOthersCanWriteIsTightened() throws {
        let directory = CacheStoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        #expect(chmod(directory.path, 0o777) == 0)
        _ = try DiskCacheStore(directory: directory)
        let mode = try #require(
            try FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? Int
        )
        #expect(mode & 0o022 == 0)
    }

    @Test(.enabled(if: geteuid() == 0, "only root can hand a directory to another user"))
    func anotherUsersDirectoryIsRefused() throws {
        let directory = CacheStoreTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        #expect(chown(directory.path, 65_534, 65_534) == 0)
        let error = #expect(throws: CourierError.self) { _ = try DiskCacheStore(directory: directory) }
        #expect(error?.code == .fileAccess && error?.message.contains("another user") == true)
    }
}
