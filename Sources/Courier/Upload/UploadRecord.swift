#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The sidecar of a resumable upload, `<source>.courier-upload`: where the upload goes, the URL the server gave
/// it, which version of the file it is, and how many bytes the server confirmed. Written atomically after each
/// confirmation and never ahead of one, so a new process that finds it asks the server and sends only the rest;
/// a damaged record reads as absent (the upload starts over).
struct UploadRecord: Codable, Equatable, Sendable {
    /// Where the upload was created.
    var target: String
    /// The upload's own URL (`Location` of its creation).
    var resource: String
    /// The file as it was when the upload started.
    var file: FileIdentity
    /// Bytes the server confirmed it has.
    var confirmed: Int64

    /// What says a file is the one an upload started with: its size and modification time, and its SHA-256 when
    /// the caller asked for that check.
    struct FileIdentity: Codable, Equatable, Sendable {
        var size: Int64
        /// Nanoseconds since 1970.
        var modified: Int64
        var sha256: String?
    }

    private static let magic = "courier-upload 1 "

    /// The record's path for the file at `source`.
    static func url(for source: URL) -> URL {
        source.deletingLastPathComponent().appending(path: source.lastPathComponent + ".courier-upload")
    }

    /// Writes the record beside `source`, atomically and durably.
    func save(beside source: URL) throws {
        try AtomicFile.write(try SealedJSON.seal(self, magic: Self.magic), to: Self.url(for: source), durable: true)
    }

    /// The record beside `source`, or `nil` when there is none, or it is damaged or inconsistent.
    static func load(beside source: URL) -> UploadRecord? {
        guard let data = try? Data(contentsOf: url(for: source)),
            let record = SealedJSON.open(UploadRecord.self, from: data, magic: magic),
            record.confirmed >= 0, record.confirmed <= record.file.size, URL(string: record.resource) != nil
        else { return nil }
        return record
    }

    /// Removes the record beside `source`, if any.
    static func remove(beside source: URL) {
        try? FileManager.default.removeItem(at: url(for: source))
    }
}

extension UploadRecord.FileIdentity {
    /// The identity of the regular file at `url` now; `nil` when it is not one this process can read.
    /// `digest` reads the whole file to hash it.
    static func of(_ url: URL, digest: Bool) throws -> Self? {
        let path = url.path(percentEncoded: false)
        guard let size = FileChunks.readableSize(of: url),
            let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let date = attributes[.modificationDate] as? Date
        else { return nil }
        let modified = Int64((date.timeIntervalSince1970 * 1e9).rounded())
        let sha256 = digest ? try DownloadChecksum.digest(of: url, algorithm: .sha256) : nil
        return Self(size: size, modified: modified, sha256: sha256)
    }

    /// Whether `now` is the same file: the same size and time, and the same digest when this one has one.
    func matches(_ now: Self) -> Bool {
        size == now.size && modified == now.modified && (sha256 == nil || sha256 == now.sha256)
    }
}
