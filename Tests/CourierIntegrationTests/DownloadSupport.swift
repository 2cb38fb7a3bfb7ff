import Courier
import CourierTestSupport
import CourierTesting
import Crypto
import Foundation
import Testing

/// A fresh temporary directory, removed by the caller.
func temporaryDownloadDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "courier-downloads-\(UUID().uuidString)"
    )
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// Runs `body` with a server, a session, a manager and a temporary directory.
func withDownloads<T>(
    _ configuration: DownloadManager.Configuration = DownloadManager.Configuration(),
    _ body: (DownloadManager, TestServer, URL) async throws -> T
) async throws -> T {
    let directory = try temporaryDownloadDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await withTestServer { server in
        try await withSession { session in
            let manager = try DownloadManager(session: session, configuration: configuration)
            return try await body(manager, server, directory)
        }
    }
}

/// The SHA-256 (hex) of a file.
func sha256(of url: URL) throws -> String { sha256Hex(try Data(contentsOf: url)) }

/// The SHA-256 (hex) of some bytes.
/// Every event of `download` until it ends.
func collectEvents(_ download: Download) async -> [DownloadEvent] {
    var events: [DownloadEvent] = []
    for await event in await download.events() { events.append(event) }
    return events
}

extension URL {
    /// `<path>.part`.
    var partFile: URL { deletingLastPathComponent().appendingPathComponent(lastPathComponent + ".part") }
    /// `<path>.part.resume`.
    var resumeRecord: URL { deletingLastPathComponent().appendingPathComponent(lastPathComponent + ".part.resume") }
    /// Whether a file exists here.
    var exists: Bool { FileManager.default.fileExists(atPath: path) }
    /// The size of the file here, or -1.
    var fileSize: Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? -1 }
}

extension DownloadEvent {
    var isRestarted: Bool { if case .restarted = self { true } else { false } }
    var isRetrying: Bool { if case .retrying = self { true } else { false } }
    var isProgress: Bool { if case .progress = self { true } else { false } }
}
