import Crypto
public import Logging

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Entries on disk, one file per entry named by the SHA-256 of its key, bodies compressed with zlib when that
/// pays (see ``CacheCompression``).
///
/// - Writes go to a temporary file renamed into place, so a file is whole or absent, even after a crash.
/// - Every file carries an HMAC-SHA256 of its contents under a key kept in the store (`sealing-key`, `0600`): a
///   truncated, corrupt, foreign or forged file is a miss and is removed.
/// - Entries are opened only as regular files no larger than ``maxBytes`` (never through a symbolic link, never a
///   FIFO or device that could block), so nothing planted in the directory can hang or flood a read.
/// - A directory that others can write is tightened to its owner, and one that belongs to another user is refused.
/// - A write that fails (full disk, read-only directory) is logged as a warning; it never fails a request.
/// - Eviction keeps the total under ``maxBytes``, least recently used first, by the store's own access order
///   (kept in memory and saved in `access-order` beside the entries; file access times are not used), and drops
///   entries older than ``maxAge``.
/// - Opening the store rebuilds its index from the directory. The directory is `0700`, the files `0600`.
///
/// One store per directory: two stores (or processes) writing one directory each keep their own index.
public actor DiskCacheStore: CacheStorage {
    /// Where the entries live.
    public nonisolated let directory: URL
    /// The most bytes the entry files may take together.
    public nonisolated let maxBytes: Int
    /// Entries stored longer ago than this are removed; `nil` keeps them until evicted for space.
    public nonisolated let maxAge: Duration?
    /// How bodies are compressed.
    public nonisolated let compression: CacheCompression
    private let logger: Logger
    /// What authenticates the entries; see ``CacheSealingKey``.
    private let sealingKey: SymmetricKey
    /// ``directory``'s path, ending in a slash.
    private nonisolated let directoryPath: String

    private struct Indexed {
        var summary: CacheEntrySummary
        var storedBodyBytes: Int
        var isCompressed: Bool
    }

    private var index: [String: Indexed]
    private var order: LRUOrder<String>
    private var totalBytes: Int
    private var accessesSinceSave = 0

    static let entrySuffix = ".entry"
    static let accessOrderName = "access-order"
    /// How many reads and writes may go by before the access order is saved again.
    private static let accessesPerSave = 256

    /// Opens (creating when needed) the store in `directory` and rebuilds its index from the files there.
    /// Throws ``CourierError/Code/fileAccess`` when the directory cannot be created or read.
    public init(
        directory: URL,
        maxBytes: Int = 256 << 20,
        maxAge: Duration? = nil,
        compression: CacheCompression = CacheCompression(),
        logger: Logger = Logger(label: "courier.cache")
    ) throws {
        self.directory = directory
        let path = directory.path(percentEncoded: false)
        self.directoryPath = path.hasSuffix("/") ? path : path + "/"
        self.maxBytes = max(0, maxBytes)
        self.maxAge = maxAge
        self.compression = compression
        self.logger = logger
        do {
            try FileManager.default.createDirectory(
                at: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw CourierError(
                code: .fileAccess,
                message: "cannot create the cache directory \(directory.path): \(SystemErrorText.describe(error))",
                underlying: error
            )
        }
        try Self.secure(directory, logger: logger)
        sealingKey = try CacheSealingKey.load(in: directory)
        let loaded = try Self.load(directory, maxBytes: self.maxBytes, logger: logger)
        index = loaded.index
        order = loaded.order
        totalBytes = loaded.index.values.reduce(0) { $0 + $1.summary.storedBytes }
    }

    /// Where a command-line tool keeps its cache by default: `$XDG_CACHE_HOME/courier`, else `~/.cache/courier`
    /// (the XDG base directory rules).
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let base = environment["XDG_CACHE_HOME"], base.hasPrefix("/") {
            return URL(filePath: base, directoryHint: .isDirectory).appendingPathComponent("courier")
        }
        let home =
            environment["HOME"].map { URL(filePath: $0, directoryHint: .isDirectory) }
            ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".cache").appendingPathComponent("courier")
    }

    // MARK: CacheStorage

    public func entry(for key: CacheKey) -> CacheEntry? {
        let name = key.digest
        guard index[name] != nil else { return nil }
        guard let file = RegularFile.contents(of: filePath(name), maximumSize: maxBytes) else {
            forget(name, because: "it could not be read as a regular file of a size the store writes")
            return nil
        }
        guard let entry = try? CacheEntryCodec.decode(file, key: sealingKey), entry.key == key.text else {
            forget(name, because: "it is corrupt or belongs to another key")
            return nil
        }
        if isTooOld(entry.storedAt) {
            forget(name, because: nil)
            return nil
        }
        order.touch(name)
        noteAccess()
        return entry
    }

    public func store(_ entry: CacheEntry) {
        let name = CacheKey(text: entry.key).digest
        let (file, storedBodyBytes, isCompressed) = CacheEntryCodec.encode(
            entry,
            compression: compression,
            key: sealingKey
        )
        guard file.count <= maxBytes else {
            forget(name, because: nil)
            return
        }
        do {
            try AtomicFile.write(file, to: fileURL(name))
        } catch {
            logger.warning(
                "the cache could not store an entry; the request goes on without it",
                metadata: ["reason": "\(error)"]
            )
            return
        }
        if let old = index[name] { totalBytes -= old.summary.storedBytes }
        var summary = entry.summary
        summary.storedBytes = file.count
        index[name] = Indexed(summary: summary, storedBodyBytes: storedBodyBytes, isCompressed: isCompressed)
        totalBytes += file.count
        order.touch(name)
        evict()
        noteAccess()
    }

    @discardableResult
    public func removeEntry(for key: CacheKey) -> Bool {
        let name = key.digest
        guard index[name] != nil else { return false }
        forget(name, because: nil)
        saveAccessOrder()
        return true
    }

    @discardableResult
    public func removeEntries(where matches: @Sendable (CacheEntrySummary) -> Bool) -> Int {
        let doomed = index.filter { matches($0.value.summary) }.keys
        for name in doomed { forget(name, because: nil) }
        saveAccessOrder()
        return doomed.count
    }

    public func summaries() -> [CacheEntrySummary] {
        index.values.map(\.summary)
    }

    public func statistics() -> CacheStoreStatistics {
        CacheStoreStatistics(
            entryCount: index.count,
            storedBytes: totalBytes,
            bodyBytes: index.values.reduce(0) { $0 + $1.summary.bodyBytes },
            storedBodyBytes: index.values.reduce(0) { $0 + $1.storedBodyBytes },
            uncompressedEntries: index.values.filter { !$0.isCompressed }.count
        )
    }

    /// Saves the access order now (it is saved every few hundred accesses and after removals anyway).
    public func flush() {
        saveAccessOrder()
    }

    // MARK: Files

    private nonisolated func fileURL(_ name: String) -> URL {
        URL(filePath: filePath(name), directoryHint: .notDirectory)
    }

    /// The path of `name`'s file, joined as text: `appendingPathComponent` on a `URL` took longer than reading
    /// and decoding the entry together.
    private nonisolated func filePath(_ name: String) -> String {
        directoryPath + name + Self.entrySuffix
    }

    /// Drops `name` from the index and removes its file; logs why when the reason is worth a warning.
    private func forget(_ name: String, because reason: String?) {
        if let reason {
            logger.warning("removed a cache entry because \(reason)", metadata: ["file": "\(name)\(Self.entrySuffix)"])
        }
        try? FileManager.default.removeItem(at: fileURL(name))
        if let old = index.removeValue(forKey: name) { totalBytes -= old.summary.storedBytes }
        order.remove(name)
    }

    private func isTooOld(_ storedAt: Date) -> Bool {
        guard let maxAge else { return false }
        return Date().timeIntervalSince(storedAt) > maxAge.seconds
    }

    private func evict() {
        if maxAge != nil {
            for (name, indexed) in index where isTooOld(indexed.summary.storedAt) { forget(name, because: nil) }
        }
        var evicted = false
        while totalBytes > maxBytes, let oldest = order.oldest {
            forget(oldest, because: nil)
            evicted = true
        }
        if evicted { saveAccessOrder() }
    }

    private func noteAccess() {
        accessesSinceSave += 1
        if accessesSinceSave >= Self.accessesPerSave { saveAccessOrder() }
    }

    private func saveAccessOrder() {
        accessesSinceSave = 0
        let text = order.keysOldestFirst.joined(separator: "\n")
        do {
            try AtomicFile.write(Data(text.utf8), to: directory.appendingPathComponent(Self.accessOrderName))
        } catch {
            logger.warning("the cache could not save its access order", metadata: ["reason": "\(error)"])
        }
    }

    /// Reads every entry's header. Unreadable or corrupt files and temporary files left by a crash are removed.
    /// The access order comes from `access-order`; entries it does not list (written after it was last saved)
    /// count as the most recent, in the order they were stored.
    private static func load(
        _ directory: URL,
        maxBytes: Int,
        logger: Logger
    ) throws -> (index: [String: Indexed], order: LRUOrder<String>) {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory.path) } catch {
            throw CourierError(
                code: .fileAccess,
                message: "cannot read the cache directory \(directory.path): \(SystemErrorText.describe(error))",
                underlying: error
            )
        }
        var index: [String: Indexed] = [:]
        for name in names {
            let url = directory.appendingPathComponent(name)
            if AtomicFile.isLeftover(name) {
                try? FileManager.default.removeItem(at: url)
                continue
            }
            guard name.hasSuffix(entrySuffix) else { continue }
            let digest = String(name.dropLast(entrySuffix.count))
            guard let (header, headerEnd, size) = readHeader(url, maxBytes: maxBytes),
                CacheKey(text: header.key).digest == digest
            else {
                logger.warning("removed an unreadable cache file", metadata: ["file": "\(name)"])
                try? FileManager.default.removeItem(at: url)
                continue
            }
            let summary = CacheEntrySummary(
                key: header.key,
                method: header.method,
                url: header.url,
                status: header.status,
                storedAt: header.storedAt,
                expiresAt: header.expiresAt,
                bodyBytes: header.bodyLength,
                storedBytes: size
            )
            index[digest] = Indexed(
                summary: summary,
                storedBodyBytes: size - headerEnd,
                isCompressed: header.isCompressed
            )
        }
        var order = LRUOrder<String>()
        let saved = (try? String(contentsOf: directory.appendingPathComponent(accessOrderName), encoding: .utf8)) ?? ""
        for name in saved.split(separator: "\n").map(String.init) where index[name] != nil { order.touch(name) }
        let unlisted = index.filter { !order.contains($0.key) }.sorted {
            $0.value.summary.storedAt < $1.value.summary.storedAt
        }
        for (name, _) in unlisted { order.touch(name) }
        return (index, order)
    }

    /// A file's header, where the header ends, and the file's size, reading only the header's bytes.
    private static func readHeader(_ url: URL, maxBytes: Int) -> (CacheEntryCodec.Header, Int, Int)? {
        guard let file = RegularFile(path: url.path(percentEncoded: false), maximumSize: maxBytes),
            let prefix = file.read(upTo: CacheEntryCodec.prefixLength),
            let end = try? CacheEntryCodec.headerEnd(prefix), end <= file.size,
            let rest = file.read(upTo: end - prefix.count),
            let header = try? CacheEntryCodec.decodeHeader(prefix + rest)
        else { return nil }
        return (header, end, file.size)
    }

    /// Makes sure no other user can plant or swap entries: a directory that belongs to someone else is refused,
    /// and one that its group or others may write is tightened to its owner (`chmod go-w`).
    private static func secure(_ directory: URL, logger: Logger) throws {
        let path = directory.path(percentEncoded: false)
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw CourierError(code: .fileAccess, message: "the cache directory \(directory.path) is not a directory")
        }
        guard info.st_uid == geteuid() else {
            throw CourierError(
                code: .fileAccess,
                message: "the cache directory \(directory.path) belongs to another user; choose one of your own"
            )
        }
        let writableByOthers = info.st_mode & mode_t(0o022)
        guard writableByOthers != 0 else { return }
        guard chmod(path, (info.st_mode & mode_t(0o7777)) & ~writableByOthers) == 0 else {
            throw CourierError(
                code: .fileAccess,
                message: "the cache directory \(directory.path) can be written by others and could not be made private"
            )
        }
        logger.warning(
            "the cache directory could be written by other users; it is now writable by its owner alone",
            metadata: ["directory": "\(directory.path)"]
        )
    }
}
