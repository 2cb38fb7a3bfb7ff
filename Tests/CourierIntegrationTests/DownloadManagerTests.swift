import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@Suite("Download manager: queue, priorities, operations, persistence, progress", .timeLimit(.minutes(3)))
struct DownloadManagerTests {
    /// A file the server sends slowly, so it is still running when the test acts on it.
    func slow(_ server: TestServer, _ name: String, size: Int = 200_000) -> URL {
        server.url("/file/\(size)?rate=100000&key=\(name)")
    }

    /// Runs `body` with a state directory, the server, a download directory and a session: for tests that open
    /// several managers on one state directory, as a restarted process would.
    func withStateDirectory(_ body: (URL, TestServer, URL, Session) async throws -> Void) async throws {
        let state = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: state) }
        try await withDownloads { _, server, directory in
            try await withSession { session in try await body(state, server, directory, session) }
        }
    }

    /// A download keeps the bytes as the server sent them, coded or not (a `.tar.gz` served with
    /// `Content-Encoding: gzip` stays gzip), where a stream of the same answer is decoded.
    @Test func aDownloadKeepsACodedBodyAsItWasSent() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withServerSession { session, server in
            let manager = try DownloadManager(session: session)
            let target = directory.appendingPathComponent("document.json.gz")
            let download = try await manager.add(server.url("/gzip"), to: .file(target))
            let file = try await download.completion()
            #expect(try Data(contentsOf: file).starts(with: [0x1f, 0x8b]))
        }
    }

    /// WYNetwork hands back where a failed download keeps its bytes; so does the error here.
    @Test func aFailedDownloadsErrorSaysWhereItsPartialFileIsKept() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withServerSession { session, server in
            let manager = try DownloadManager(session: session)
            let target = directory.appendingPathComponent("cut.bin")
            let download = try await manager.add(
                server.url("/file/100000?cut=30000&key=cut"),
                to: .file(target),
                options: DownloadOptions(retries: 0)
            )
            let error = await courierError { _ = try await download.completion() }
            let kept = try #require(error?.partialFile)
            #expect(kept == target.partFile)
            #expect(
                FileManager.default.fileExists(atPath: kept.path)
                    && !FileManager.default.fileExists(atPath: target.path)
            )
            #expect(error?.message.contains(kept.path) == true)
        }
    }

    /// A download whose bytes all arrived but whose destination cannot take them (RBEFireworks' fallback path):
    /// the whole, verified file stays at the path the error names, for the caller to move, never lost. A file that
    /// appeared under the name meanwhile is not replaced; a folder put there cannot be.
    @Test func aFinishedDownloadThatCannotBePutInPlaceIsKeptWhereTheErrorSays() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withServerSession { session, server in
            let manager = try DownloadManager(session: session)
            for (name, overwrites) in [("appeared", false), ("folder", true)] {
                let target = directory.appendingPathComponent("\(name).bin")
                let download = try await manager.add(
                    server.url("/file/200000?rate=400000&key=\(name)"),
                    to: .file(target),
                    options: DownloadOptions(
                        checksum: try .sha256(ServerFiles.sha256(count: 200_000)),
                        retries: 0,
                        overwrites: overwrites
                    )
                )
                await eventually("bytes arrived") { await download.progress.completedBytes > 0 }
                if overwrites {
                    try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
                    try Data("x".utf8).write(to: target.appendingPathComponent("inside"))
                } else {
                    try Data("someone else's".utf8).write(to: target)
                }
                let error = await courierError { _ = try await download.completion() }
                let kept = try #require(error?.partialFile, "\(String(describing: error))")
                #expect(kept == target.partFile)
                #expect(try sha256(of: kept) == ServerFiles.sha256(count: 200_000), "the whole file, verified")
                #expect(error?.message.contains(kept.path) == true, "\(String(describing: error))")
                #expect(error?.message.components(separatedBy: kept.path).count == 2, "named once")
                if overwrites {
                    #expect(error?.code == .fileAccess)
                    // Once the name is free, a resume puts the kept file in place.
                    try FileManager.default.removeItem(at: target)
                    let requests = server.totalHits
                    let bytes = server.counter("file-bytes:folder")
                    #expect(try await manager.resume(.download(download)) == 1)
                    _ = try await download.completion()
                    #expect(try sha256(of: target) == ServerFiles.sha256(count: 200_000))
                    #expect(server.totalHits - requests <= 1, "at most one request to confirm")
                    #expect(server.counter("file-bytes:folder") == bytes, "nothing fetched again")
                    #expect(!FileManager.default.fileExists(atPath: kept.path))
                } else {
                    #expect(error?.code == .destinationExists)
                    #expect(try Data(contentsOf: target) == Data("someone else's".utf8))
                }
            }
        }
    }

    /// A download's requests are in the pool with its tag and key; a pool cancel by the tag ends the download
    /// with `cancelled`, its bytes kept, and a resume goes on from them.
    @Test func aDownloadIsInThePoolWithItsTagAndKeyAndAPoolCancelReachesIt() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withServerSession { session, server in
            let manager = try DownloadManager(session: session)
            let target = directory.appendingPathComponent("tagged.bin")
            let download = try await manager.add(
                slow(server, "tagged"),
                to: .file(target),
                options: DownloadOptions(key: "k1", tag: "nightly")
            )
            await eventually("the download's request is in the pool with its tag and key") {
                await session.pool.snapshot().contains {
                    $0.tag == "nightly" && $0.userInfo[DownloadOptions.keyInfo] as? String == "k1"
                }
            }
            await eventually("some bytes arrived") { await download.progress.completedBytes > 0 }
            #expect(await session.pool.cancelAll(tag: "nightly") >= 1)
            let error = await courierError { _ = try await download.completion() }
            #expect(error?.code == .cancelled)
            #expect(await download.state == .failed)
            #expect(FileManager.default.fileExists(atPath: target.partFile.path))
            _ = try await manager.resume(.download(download))
            #expect(try await download.completion() == target)
            #expect(try Data(contentsOf: target) == ServerFiles.data(count: 200_000))
        }
    }

    @Test func aRelativePathIsResolvedWithTheSessionsBaseURLAndAPIVersion() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withServerSession({ $0.apiVersion = "v7" }) { session, server in
            let manager = try DownloadManager(session: session)
            let download = try await manager.add(
                "/file/1000",
                to: .file(directory.appendingPathComponent("versioned.bin"))
            )
            _ = try await download.completion()
            // The test server skips a leading version when routing, so only the path it saw tells the two apart.
            #expect(server.hits("/v7/file/1000") == 1 && server.hits("/file/1000") == 0)
        }
    }

    @Test func aRestoredDownloadWhoseStoredChecksumIsDamagedComesBackFailedNotUnchecked() async throws {
        try await withStateDirectory { state, server, directory, session in
            let first = try DownloadManager(session: session, configuration: .init(stateDirectory: state))
            let target = directory.appendingPathComponent("checked.bin")
            let options = DownloadOptions(checksum: try .sha256(ServerFiles.sha256(count: 200_000)))
            let download = try await first.add(slow(server, "checked"), to: .file(target), options: options)
            await eventually("bytes arrived") { await download.progress.completedBytes > 0 }
            try await first.pause(.all)

            // The record on disk loses its checksum's last digit (a bad edit, a torn copy).
            let records = try FileManager.default.contentsOfDirectory(at: state, includingPropertiesForKeys: nil)
            let record = try #require(records.first { $0.pathExtension == "download" })
            let text = try String(contentsOf: record, encoding: .utf8)
            let damaged = try #require(text.range(of: #"sha256:[0-9a-f]{64}"#, options: .regularExpression))
            let edited = text.replacingCharacters(
                in: text.index(before: damaged.upperBound)..<damaged.upperBound,
                with: ""
            )
            try Data(edited.utf8).write(to: record)

            let second = try DownloadManager(session: session, configuration: .init(stateDirectory: state))
            let restored = try #require(await second.restore().first)
            #expect(await restored.state == .failed, "restored without its checksum it would resume unchecked")
            let reason = await restored.error
            #expect(reason?.code == .invalidParameter && reason?.message.contains("checksum") == true)
            await #expect(throws: CourierError.self) { try await second.resume(.download(restored)) }
            #expect(await restored.state == .failed)
            #expect(
                try String(contentsOf: record, encoding: .utf8) == edited,
                "the record is kept as found, for the next restore"
            )
        }
    }

    @Test func aPathIsResolvedAgainstTheSessionsBaseURL() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withServerSession { session, server in
            let manager = try DownloadManager(session: session)
            let target = directory.appendingPathComponent("relative.bin")
            let download = try await manager.add("/file/1000?key=relative", to: .file(target))
            _ = try await download.completion()
            #expect(try sha256(of: target) == ServerFiles.sha256(count: 1000))
            #expect(server.counter("file:relative") == 1)
            try await withSession { bare in
                let unanchored = try DownloadManager(session: bare)
                let error = await courierError {
                    _ = try await unanchored.add("/file/10", to: .file(directory.appendingPathComponent("x")))
                }
                #expect(error?.code == .invalidURL, "a relative path without a base URL is refused")
            }
        }
    }

    @Test func atMostTheLimitRunAndPrioritiesDecideWhoIsNext() async throws {
        try await withDownloads(DownloadManager.Configuration(maxConcurrentDownloads: 1)) {
            manager,
            server,
            directory in
            let first = try await manager.add(slow(server, "a"), to: .file(directory.appendingPathComponent("a")))
            let low = try await manager.add(
                server.url("/file/1000?key=low"),
                to: .file(directory.appendingPathComponent("low")),
                options: DownloadOptions(priority: .low)
            )
            let high = try await manager.add(
                slow(server, "high"),
                to: .file(directory.appendingPathComponent("high")),
                options: DownloadOptions(priority: .high)
            )
            #expect(await manager.runningCount == 1)
            #expect(await manager.waiting.map(\.id) == [high.id, low.id])
            #expect(await low.state == .waiting && server.counter("file:low") == 0)
            try await manager.pause(.download(first))
            await eventually("the high-priority download runs") { await high.state == .running }
            #expect(await low.state == .waiting && server.counter("file:low") == 0)
            _ = try await high.completion()
            _ = try await low.completion()
            #expect(await first.state == .paused)
        }
    }

    @Test func pausingADownloadThatIsNotResumableKeepsNothingAndResumingStartsOver() async throws {
        try await withStateDirectory { state, server, directory, session in
            let manager = try DownloadManager(session: session, configuration: .init(stateDirectory: state))
            let target = directory.appendingPathComponent("whole")
            let download = try await manager.add(
                slow(server, "whole"),
                to: .file(target),
                options: DownloadOptions(resumable: false)
            )
            await eventually("bytes arrive") { await download.progress.completedBytes > 0 }
            try await manager.pause(.download(download))
            #expect(await download.state == .paused)
            #expect(!target.partFile.exists && !target.resumeRecord.exists)
            let restored = try await DownloadManager(session: session, configuration: .init(stateDirectory: state))
                .restore()
            #expect(restored.map(\.options.resumable) == [false], "the state directory keeps the choice")
            try await manager.resume(.download(download))
            _ = try await download.completion()
            #expect(try sha256(of: target) == ServerFiles.sha256(count: 200_000))
            #expect(server.counter("file:whole") == 2)
            #expect(server.counter("file-bytes:whole") > 200_000, "the resumed download fetched the first bytes again")
        }
    }

    @Test func pauseResumeCancelAndRestartOneAListAndAll() async throws {
        try await withDownloads { manager, server, directory in
            let names = ["one", "two", "three"]
            var downloads: [Download] = []
            for name in names {
                downloads.append(
                    try await manager.add(slow(server, name), to: .file(directory.appendingPathComponent(name)))
                )
            }
            await eventually("all three have bytes") {
                var all = true
                for download in downloads where await download.progress.completedBytes == 0 { all = false }
                return all
            }
            #expect(try await manager.pause(.all) == 3)
            for download in downloads {
                #expect(await download.state == .paused)
                #expect(download.destination.resumeRecord.exists && download.destination.partFile.exists)
            }
            let paused = await downloads[0].progress.completedBytes
            #expect(ResumeRecordFile.writtenBytes(at: downloads[0].destination.resumeRecord) == paused)

            // A paused download does not move; an operation that does not apply is refused when named alone.
            try await Task.sleep(for: .milliseconds(200))
            #expect(await downloads[0].progress.completedBytes == paused)
            let refused = await courierError { try await manager.pause(.download(downloads[0])) }
            #expect(refused?.code == .invalidState)
            #expect(try await manager.pause(.all) == 0)

            #expect(try await manager.resume(.downloads([downloads[0], downloads[1]])) == 2)
            #expect(try await manager.cancel(.url(slow(server, "three"))) == 1)
            #expect(await downloads[2].state == .cancelled)
            #expect(!downloads[2].destination.partFile.exists && !downloads[2].destination.resumeRecord.exists)

            _ = try await downloads[0].completion()
            _ = try await downloads[1].completion()
            #expect(try sha256(of: downloads[0].destination) == ServerFiles.sha256(count: 200_000))
            #expect(server.counter("file-bytes:one") - 200_000 <= DownloadResumeTests.retryOverlap)

            // Restart fetches a cancelled download again from zero.
            #expect(try await manager.restart(.download(downloads[2])) == 1)
            _ = try await downloads[2].completion()
            #expect(server.counter("file:three") >= 2)
            let cancelledError = await courierError {
                let late = try await manager.add(
                    slow(server, "late"),
                    to: .file(directory.appendingPathComponent("late"))
                )
                try await manager.cancel(.download(late))
                _ = try await late.completion()
            }
            #expect(cancelledError?.code == .cancelled)
        }
    }

    @Test func aNewManagerOnTheSameStateDirectoryPicksUpUnfinishedDownloads() async throws {
        try await withStateDirectory { state, server, directory, session in
            let first = try DownloadManager(session: session, configuration: .init(stateDirectory: state))
            let target = directory.appendingPathComponent("persisted.bin")
            let download = try await first.add(slow(server, "persisted"), to: .file(target))
            await eventually("bytes arrived") { await download.progress.completedBytes > 0 }
            try await first.pause(.all)
            let kept = try await first.add(
                slow(server, "kept"),
                to: .file(directory.appendingPathComponent("kept.bin")),
                startsImmediately: false
            )
            #expect(await kept.state == .idle)

            let second = try DownloadManager(session: session, configuration: .init(stateDirectory: state))
            let restored = await second.restore()
            #expect(Set(restored.map(\.destination.lastPathComponent)) == ["persisted.bin", "kept.bin"])
            let again = try #require(restored.first { $0.destination.lastPathComponent == "persisted.bin" })
            #expect(await again.state == .paused)
            #expect(await again.progress.completedBytes > 0)
            try await second.resume(.download(again))
            _ = try await again.completion()
            #expect(try sha256(of: target) == ServerFiles.sha256(count: 200_000))
            #expect(server.counter("file-bytes:persisted") - 200_000 <= DownloadResumeTests.retryOverlap)
            // Completed downloads leave the state directory; the idle one stays.
            let third = try DownloadManager(session: session, configuration: .init(stateDirectory: state))
            #expect(await third.restore().map(\.destination.lastPathComponent) == ["kept.bin"])
        }
    }

    @Test func aKeyAndATagOfTheCallersOwnFindAndSelectADownloadAlsoAfterARestore() async throws {
        try await withStateDirectory { state, server, directory, session in
            let first = try DownloadManager(session: session, configuration: .init(stateDirectory: state))
            let target = directory.appendingPathComponent("keyed.bin")
            let download = try await first.add(
                slow(server, "keyed"),
                to: .file(target),
                options: DownloadOptions(key: "report-42", tag: "reports")
            )
            #expect(await first.download(key: "report-42") === download)
            #expect(await first.download(key: "other") == nil)
            await eventually("bytes arrived") { await download.progress.completedBytes > 0 }
            #expect(try await first.pause(.key("report-42")) == 1)
            #expect(await download.state == .paused)
            #expect(try await first.pause(.key("other")) == 0)
            let refused = await #expect(throws: CourierError.self) {
                try await first.add(
                    slow(server, "second"),
                    to: .file(directory.appendingPathComponent("second.bin")),
                    options: DownloadOptions(key: "report-42")
                )
            }
            #expect(refused?.code == .invalidParameter)
            // The same destination with the same key is the same download, as with no key.
            #expect(
                try await first.add(
                    slow(server, "keyed"),
                    to: .file(target),
                    options: DownloadOptions(key: "report-42", tag: "reports"),
                    startsImmediately: false
                ) === download
            )

            let second = try DownloadManager(session: session, configuration: .init(stateDirectory: state))
            _ = await second.restore()
            let restored = try #require(await second.download(key: "report-42"))
            #expect(restored.destination.lastPathComponent == "keyed.bin" && restored.options.key == "report-42")
            #expect(restored.options.tag == "reports")
            #expect(try await second.resume(.key("report-42")) == 1)
            // Its requests are in the pool under its tag again, so cancelAll(tag:) still reaches it.
            await eventually("the restored download's request is pooled under its tag") {
                await session.pool.snapshot().contains { $0.tag == "reports" }
            }
            _ = try await restored.completion()
            #expect(try sha256(of: target) == ServerFiles.sha256(count: 200_000))
        }
    }

    @Test func eventsStartWithTheCurrentStateAndProgressIsThrottled() async throws {
        try await withDownloads { manager, server, directory in
            let download = try await manager.add(
                server.url("/file/300000?rate=300000"),
                to: .file(directory.appendingPathComponent("events"))
            )
            let events = await collectEvents(download)
            guard case .state = events.first else {
                Issue.record("the first event is \(String(describing: events.first))")
                return
            }
            let progress = events.filter(\.isProgress).count
            #expect(progress >= 3 && progress <= 30)  // about one second at ≤ 10 a second, plus the first and last
            let late = await collectEvents(download)
            #expect(late.count == 3)  // state, progress, completed
            let aggregate = await manager.progress()
            #expect(aggregate.completedBytes == 300_000 && aggregate.totalBytes == 300_000)
        }
    }

    @Test func bandwidthLimitsHoldTheRateDown() async throws {
        try await withDownloads(DownloadManager.Configuration(bytesPerSecond: 400_000)) { manager, server, directory in
            let start = ContinuousClock.now
            let download = try await manager.add(
                server.url("/file/300000"),
                to: .file(directory.appendingPathComponent("limited")),
                options: DownloadOptions(bytesPerSecond: 200_000)
            )
            _ = try await download.completion()
            // 300 kB at 200 kB/s (after a 50 kB burst) cannot take less than about 1.2 s.
            #expect(start.duration(to: .now) > .milliseconds(1100))
        }
    }

    @Test func theManagersLimitHoldsAllItsDownloadsDownTogether() async throws {
        try await withDownloads(DownloadManager.Configuration(maxConcurrentDownloads: 2, bytesPerSecond: 200_000)) {
            manager,
            server,
            directory in
            let start = ContinuousClock.now
            let first = try await manager.add(
                server.url("/file/150000?key=m1"),
                to: .file(directory.appendingPathComponent("m1"))
            )
            let second = try await manager.add(
                server.url("/file/150000?key=m2"),
                to: .file(directory.appendingPathComponent("m2"))
            )
            _ = try await first.completion()
            _ = try await second.completion()
            // No download has a limit of its own: 300 kB in all at the manager's 200 kB/s cannot take less than
            // about 1.2 s (were it applied to each download alone, both would be done in about 0.5 s).
            #expect(start.duration(to: .now) > .milliseconds(1100))
        }
    }
}

/// Reads a sidecar record's byte count the way a person would: the JSON after the first line.
enum ResumeRecordFile {
    static func writtenBytes(at url: URL) -> Int64? {
        guard let data = try? Data(contentsOf: url), let newline = data.firstIndex(of: UInt8(ascii: "\n")),
            let object = try? JSONSerialization.jsonObject(with: data[(newline + 1)...]) as? [String: Any],
            let segments = object["segments"] as? [[String: Any]]
        else { return nil }
        return segments.reduce(0) { $0 + (($1["written"] as? NSNumber)?.int64Value ?? 0) }
    }
}
