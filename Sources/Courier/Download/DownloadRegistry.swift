#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The state directory of a ``DownloadManager``: one small file per download (`<id>.download`) saying what
/// to fetch, where to, and whether it was meant to run. The bytes themselves are described by the sidecar
/// record next to the part file. Request headers are never saved here (they may hold credentials).
struct DownloadRegistry: Sendable {
    /// One download as saved.
    struct Entry: Codable, Equatable, Sendable {
        var url: String
        var destination: String
        var state: DownloadState
        var checksum: String?
        var connections: Int
        var retries: Int
        var bytesPerSecond: Int?
        var overwrites: Bool
        var priority: Int
        /// The caller's key; absent in entries saved before keys existed.
        var key: String?
        /// The pool tag; absent in entries saved before tags were carried.
        var tag: String?
        /// `false` for a download that keeps nothing partial; absent (resumable) in entries saved before.
        var resumable: Bool?
    }

    let directory: URL

    /// Creates the directory (mode 0700) when needed.
    init(directory: URL) throws {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(
                at: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw CourierError(
                code: .fileAccess,
                message: "cannot create the state directory \(directory.path): \(SystemErrorText.describe(error))"
            )
        }
    }

    private func file(for destination: String) -> URL {
        directory.appendingPathComponent(DownloadID(destination: URL(filePath: destination)).rawValue + ".download")
    }

    /// Saves `entry`, or forgets it once the download is completed or cancelled. Failures are ignored: the
    /// sidecar record still lets the same command resume.
    func save(_ entry: Entry) {
        let url = file(for: entry.destination)
        if entry.state == .completed || entry.state == .cancelled {
            try? FileManager.default.removeItem(at: url)
            return
        }
        guard let data = try? JSONEncoder().encode(entry) else { return }
        try? AtomicFile.write(data, to: url, durable: true)
    }

    /// Every readable entry, ordered by destination; damaged files and leftovers are removed.
    func entries() -> [Entry] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var found: [Entry] = []
        for name in names {
            let url = directory.appendingPathComponent(name)
            if AtomicFile.isLeftover(name) {
                try? FileManager.default.removeItem(at: url)
                continue
            }
            guard name.hasSuffix(".download") else { continue }
            guard let data = try? Data(contentsOf: url), let entry = try? JSONDecoder().decode(Entry.self, from: data)
            else {
                try? FileManager.default.removeItem(at: url)
                continue
            }
            found.append(entry)
        }
        return found.sorted { $0.destination < $1.destination }
    }
}
