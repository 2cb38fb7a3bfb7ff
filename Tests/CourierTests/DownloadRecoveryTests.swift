import CourierTesting
import Foundation
import Testing

@testable import Courier

/// Resume situations that need a record written by hand: a part file that is already whole, or a damaged
/// record. They talk to the loopback server like the integration tests.
@Suite("Download recovery from hand-made part files and records", .timeLimit(.minutes(1)))
struct DownloadRecoveryTests {
    let size = 50_000

    func withManager(_ body: (DownloadManager, TestServer, URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-recovery-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            try await withSession { session in
                try await body(try DownloadManager(session: session), server, directory)
            }
        }
    }

    /// Writes `bytes` deterministic bytes as the part file and a record of an open-ended single stream.
    func prepare(_ target: URL, url: URL, bytes: Int, record: ResumeRecord? = nil) throws {
        let files = DownloadFiles(destination: target)
        try ServerFiles.data(count: bytes).write(to: files.part)
        var made = ResumeRecord.fresh(url: url.absoluteString)
        made.validator = EntityValidator(etag: "\"file-\(size)-v1\"")
        made.segments[0].written = Int64(bytes)
        try (record ?? made).encoded().write(to: files.record)
    }

    @Test func a416AtTheLocalLengthCompletesWithoutFetching() async throws {
        try await withManager { manager, server, directory in
            let target = directory.appendingPathComponent("whole.bin")
            let url = server.url("/file/\(size)?key=whole")
            try prepare(target, url: url, bytes: size)
            let download = try await manager.add(
                url,
                to: .file(target),
                options: DownloadOptions(checksum: .sha256(ServerFiles.sha256(count: size)))
            )
            _ = try await download.completion()
            #expect(server.counter("file:whole") == 1 && server.counter("file-bytes:whole") == 0)
            #expect(try Data(contentsOf: target) == ServerFiles.data(count: size))
        }
    }

    @Test func a416ThatDisagreesWithTheLocalLengthRestarts() async throws {
        try await withManager { manager, server, directory in
            let target = directory.appendingPathComponent("longer.bin")
            let url = server.url("/file/\(size)?key=longer")
            try prepare(target, url: url, bytes: size + 10)
            let download = try await manager.add(url, to: .file(target), startsImmediately: false)
            let events = await download.events()
            let restarted = Task {
                for await event in events { if case .restarted = event { return true } }
                return false
            }
            try await manager.start(.download(download))
            _ = try await download.completion()
            #expect(await restarted.value)
            #expect(try Data(contentsOf: target) == ServerFiles.data(count: size))
        }
    }

    @Test func aRecordCutAtAnyByteIsIgnoredAndTheDownloadStartsOver() async throws {
        try await withManager { manager, server, directory in
            let url = server.url("/file/\(size)")
            var record = ResumeRecord.fresh(url: url.absoluteString)
            record.segments[0].written = 20_000
            let encoded = try record.encoded()
            for cut in stride(from: 0, to: encoded.count, by: max(1, encoded.count / 12)) {
                let target = directory.appendingPathComponent("cut-\(cut).bin")
                let files = DownloadFiles(destination: target)
                try Data(repeating: 0xEE, count: 20_000).write(to: files.part)  // wrong bytes: must not survive
                try encoded.prefix(cut).write(to: files.record)
                let download = try await manager.add(url, to: .file(target))
                _ = try await download.completion()
                #expect(try Data(contentsOf: target) == ServerFiles.data(count: size), "cut at \(cut)")
            }
        }
    }

    @Test func aRecordForAnotherURLIsNotTrusted() async throws {
        try await withManager { manager, server, directory in
            let target = directory.appendingPathComponent("other.bin")
            try prepare(target, url: server.url("/file/999"), bytes: 20_000)
            try Data(repeating: 0xEE, count: 20_000).write(to: DownloadFiles(destination: target).part)
            let download = try await manager.add(server.url("/file/\(size)"), to: .file(target))
            _ = try await download.completion()
            #expect(try Data(contentsOf: target) == ServerFiles.data(count: size))
        }
    }
}
