import Courier
import CourierTesting

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DemoTour {
    /// The download manager's part of the tour: a download paused half way and resumed from its partial file,
    /// a connection that breaks and is resumed, and four connections on one file, each verified by SHA-256.
    mutating func downloadSteps() async throws {
        let server = self.server
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-demo-downloads-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withSession { session in
            let manager = try DownloadManager(session: session)
            await check("A download is paused, resumed from its partial file, and verified") {
                let size = 1_000_000
                let url = server.url("/file/\(size)?rate=2000000&key=demo-pause")
                let options = DownloadOptions(checksum: try .sha256(ServerFiles.sha256(count: size)))
                let download = try await manager.add(
                    url,
                    to: .file(directory.appendingPathComponent("paused.bin")),
                    options: options
                )
                while await download.progress.completedBytes < 200_000 { try await Task.sleep(for: .milliseconds(20)) }
                try await manager.pause(.download(download))
                let kept = await download.progress.completedBytes
                try await manager.resume(.download(download))
                _ = try await download.completion()
                let sent = server.counter("file-bytes:demo-pause")
                return (
                    sent < size + 300_000,
                    "paused at \(ByteCount.format(kept)), resumed with Range/If-Range; "
                        + "\(ByteCount.format(sent)) sent for a \(ByteCount.format(size)) file, SHA-256 verified"
                )
            }
            await check("A connection that breaks three times is resumed from the last byte on disk") {
                let size = 400_000
                let url = server.url("/file/\(size)?cut=100000&key=demo-cut")
                let download = try await manager.add(
                    url,
                    to: .file(directory.appendingPathComponent("cut.bin")),
                    options: DownloadOptions(
                        checksum: try .sha256(ServerFiles.sha256(count: size)),
                        retryDelay: .milliseconds(10)
                    )
                )
                var retries = 0
                for await event in await download.events() { if case .retrying = event { retries += 1 } }
                _ = try await download.completion()
                return (
                    retries == 3,
                    "the server closed after every 100 kB; \(retries) retries, \(server.counter("file:demo-cut")) requests, verified"
                )
            }
            await check("Four connections fetch four segments of one file") {
                let size = 4 << 20
                let url = server.url("/file/\(size)?key=demo-segments")
                let options = DownloadOptions(checksum: try .sha256(ServerFiles.sha256(count: size)), connections: 4)
                let download = try await manager.add(
                    url,
                    to: .file(directory.appendingPathComponent("segments.bin")),
                    options: options
                )
                _ = try await download.completion()
                let requests = server.counter("file:demo-segments")
                return (
                    requests == 5,
                    "HEAD, then 4 ranged GETs written at their offsets; \(ByteCount.format(size)) verified"
                )
            }
        }
    }
}
