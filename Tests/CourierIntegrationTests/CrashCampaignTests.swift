import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Issue 9's crash campaigns: the `courier` binary is killed with SIGKILL at random moments, 50 times per
/// campaign, while it downloads (plain and segmented), fills the disk cache and fills a cookie jar. After every
/// kill, what is on disk is whole or absent: no partial file under a download's final name, resume records that
/// decode and agree with their part file, cache entries that are the answer for their own URL or a miss, a cookie
/// jar that loads.
@Suite("Crash campaigns: 50 SIGKILLs each", .serialized, .timeLimit(.minutes(5)))
struct CrashCampaignTests {
    static let kills = 50

    /// With `partNameLeft`, the part file's name is also left as a second name of the file: what a kill between the
    /// hard link that puts the file in place and the removal of the part's name leaves (a window too short to aim
    /// at, which the campaign below once hit).
    @Test(arguments: [false, true])
    func aKillBetweenTheMoveAndTheRecordRemovalIsSettledByTheNextRun(partNameLeft: Bool) async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let size = 200_000
            let digest = ServerFiles.sha256(count: size)
            let target = directory.appendingPathComponent("window.bin")
            let url = server.url("/file/\(size)?key=window").absoluteString
            let arguments = ["download", url, "-o", target.path, "--sha256", digest]
            // The helper's download finishes in well under a second, then waits 20 s between the move and the
            // record's removal (the download manager's crash-testing seam): the kill lands in that window.
            let killed = try await CLI.run(
                [url, target.path, digest, "20000"],
                program: "courier-crash-helper",
                killAfter: .seconds(4)
            )
            #expect(killed.status != 0)
            #expect(
                target.exists && target.resumeRecord.exists && !target.partFile.exists,
                "the kill missed the window between the move and the record's removal"
            )
            #expect(try sha256(of: target) == digest)
            if partNameLeft { #expect(link(target.path, target.partFile.path) == 0) }

            let again = try await CLI.run(arguments)
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try sha256(of: target) == digest)
            #expect(
                !target.resumeRecord.exists && !target.partFile.exists,
                "the stale record was left beside the whole file"
            )
            #expect(server.counter("file:window") == 1, "the settled file was not fetched again")
        }
    }

    @Test func downloadsResumeToTheRightBytesAfterEveryKill() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let size = 4 << 20
            let digest = ServerFiles.sha256(count: size)
            /// Download number `file` (plain when even, three segments when odd), paced by the server.
            func download(_ file: Int) -> (target: URL, arguments: [String]) {
                let connections = file % 2 == 0 ? 1 : 3
                let target = directory.appendingPathComponent("download-\(file).bin")
                let rate = "&rate=\(6_000_000 / connections)"
                let url = server.url("/file/\(size)?key=campaign-\(file)\(rate)").absoluteString
                return (
                    target,
                    [
                        "download", url, "-o", target.path, "--connections", String(connections), "--sha256", digest,
                        "--state-dir", directory.appendingPathComponent("state").path,
                    ]
                )
            }
            var kills = 0
            var finished = 0
            var file = 0
            while kills < Self.kills {
                let (target, arguments) = download(file)
                let outcome = try await CLI.run(arguments, killAfter: .milliseconds(Int.random(in: 30...900)))
                if target.exists {
                    // It finished (perhaps in the very moment of the kill): then it is whole and right.
                    #expect(
                        try sha256(of: target) == digest,
                        "download \(file) is at its final name with the wrong bytes"
                    )
                    // The part's name may be left as a second name of the file only with the record that settles it.
                    #expect(!target.partFile.exists || target.resumeRecord.exists)
                    if target.resumeRecord.exists {
                        // Killed between the move into place and the record's removal: the next run settles it.
                        let settled = try await CLI.run(arguments)
                        #expect(settled.status == 0, "\(settled.stderr)")
                        #expect(!target.resumeRecord.exists, "the next run left the stale record of download \(file)")
                        #expect(!target.partFile.exists, "the next run left the part's name of download \(file)")
                    }
                    finished += 1
                    file += 1
                    continue
                }
                #expect(outcome.status != 0)
                kills += 1
                try Self.checkResumeRecord(of: target)
                if kills % 10 == 0 { file += 1 }  // leave some downloads unfinished, to be finished below
            }
            // Every download left unfinished resumes to the right bytes, run with the same command (the state
            // directory holds each one's URL: another URL for the same file is refused as destinationBusy).
            var resumed = 0
            for unfinished in 0...file {
                let (target, arguments) = download(unfinished)
                guard !target.exists else { continue }
                let outcome = try await CLI.run(arguments)
                #expect(outcome.status == 0, "\(outcome.stderr)")
                #expect(try sha256(of: target) == digest)
                resumed += 1
            }
            #expect(resumed >= Self.kills / 10, "the kills left downloads unfinished to resume: \(resumed)")
            ReliabilityFigures.record(
                "crash-campaigns",
                ["campaign": "downloads (plain and segmented)", "kills": kills, "finished under fire": finished]
            )
        }
    }

    /// A resume record left by a kill decodes (or is absent, meaning "start again") and never claims more bytes
    /// than the part file holds.
    static func checkResumeRecord(of target: URL) throws {
        guard target.resumeRecord.exists else { return }
        let data = try Data(contentsOf: target.resumeRecord)
        guard let record = ResumeRecord.decode(data) else {
            Issue.record("an unreadable resume record after a kill")
            return
        }
        let partSize = Int64(target.partFile.fileSize)
        for range in record.verifiedRanges {
            #expect(
                range.upperBound <= partSize,
                "the record claims bytes up to \(range.upperBound), the part file has \(partSize)"
            )
        }
    }

    /// Writes `urls` to the file `list`, one per line, and runs `courier batch` on it with `options`, killing it
    /// with SIGKILL 100–500 ms in (while it writes what the options make it keep).
    static func batchKilledMidway(_ urls: [URL], list: URL, _ options: [String]) async throws {
        try urls.map(\.absoluteString).joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
        _ = try await CLI.run(["batch", list.path] + options, killAfter: .milliseconds(Int.random(in: 100...500)))
    }

    @Test func cacheEntriesAreWholeOrMissingAfterEveryKill() async throws {
        let folder = try newTemporaryDirectory(prefix: "courier-cache-campaign")
        defer { try? FileManager.default.removeItem(at: folder) }
        let list = folder.appendingPathComponent("urls.txt")
        try await withTestServer { server in
            var whole = 0
            for round in 0..<Self.kills {
                // A cache of its own per kill: each kill's entries are all checked, and opening the store (which
                // reads every entry's header) does not grow with the rounds and hold up the tests running beside.
                let directory = folder.appendingPathComponent("cache-\(round)")
                defer { try? FileManager.default.removeItem(at: directory) }
                let urls = (0..<300).map {
                    server.url("/cache/c\(round)-\($0)?pad=\(String(repeating: "x", count: 300))")
                }
                try await Self.batchKilledMidway(
                    urls,
                    list: list,
                    ["--concurrency", "32", "--cache", "cache-else-network", "--cache-dir", directory.path]
                )
                let store = try DiskCacheStore(directory: directory)
                for summary in await store.summaries() {
                    // a miss is fine
                    guard let entry = await store.entry(for: CacheKey(text: summary.key)) else { continue }
                    let answer = try JSONDecoder().decode(CacheAnswer.self, from: entry.body)
                    #expect(URL(string: entry.url)?.path() == answer.path, "an entry holds another URL's answer")
                    whole += 1
                }
            }
            #expect(whole > 0)
            ReliabilityFigures.record(
                "crash-campaigns",
                ["campaign": "disk cache", "kills": Self.kills, "entries checked": whole]
            )
        }
    }

    @Test func theCookieJarLoadsAfterEveryKill() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-cookie-campaign")
        defer { try? FileManager.default.removeItem(at: directory) }
        let jarFile = directory.appendingPathComponent("cookies.txt")
        let list = directory.appendingPathComponent("urls.txt")
        try await withTestServer { server in
            var most = 0
            for round in 0..<Self.kills {
                let urls = (0..<200).map { server.url("/set-cookies?r\(round)n\($0)=v\($0)") }
                try await Self.batchKilledMidway(
                    urls,
                    list: list,
                    ["--concurrency", "16", "-b", jarFile.path, "--cookie-jar", jarFile.path]
                )
                guard jarFile.exists else { continue }
                // A half-written file would end in a partial line: every line is a comment, blank or a cookie.
                let text = try String(contentsOf: jarFile, encoding: .utf8)
                #expect(text.hasPrefix(NetscapeCookieFile.header) && text.hasSuffix("\n"))
                let lines = text.split(separator: "\n").filter { !$0.hasPrefix("#") }
                let cookies = NetscapeCookieFile.cookies(in: text)
                #expect(cookies.count == lines.count, "a line that is no cookie")
                for cookie in cookies {
                    #expect(
                        cookie.name.hasSuffix("n" + cookie.value.dropFirst()),
                        "cookie \(cookie.name) has value \(cookie.value)"
                    )
                }
                most = max(most, cookies.count)
            }
            #expect(most > 0)
            ReliabilityFigures.record(
                "crash-campaigns",
                ["campaign": "cookie jar", "kills": Self.kills, "largest jar": most]
            )
        }
    }

    /// Issue 45's measure, scaled down: `courier upload --resumable` killed at a random moment ten times in a row,
    /// then run to its end. The server's file equals the source, and the bytes it took in stay within the file plus
    /// one chunk per kill (they equal the file: each run goes on from the server's offset, read from the record).
    @Test func aResumableUploadKilledTenTimesLandsWhole() async throws {
        let server = try await ResumableUploadServer.start()
        defer { Task { await server.shutdown() } }
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let size = 24 << 20
        let file = directory.appendingPathComponent("upload.bin")
        try Data(ServerFiles.bytes(offset: 0, count: size)).write(to: file)
        let arguments = [
            "upload", server.url("/uploads/campaign.bin").absoluteString, "--data", "@" + file.path, "--resumable",
        ]
        // At 2 MiB/s, ten runs of at most 0.9 s cannot finish the 24 MiB: every kill lands mid-upload.
        var kills = 0
        var resumes = 0
        while kills < 10 {
            let run = try await CLI.run(
                arguments + ["--limit-rate", "2M"],
                killAfter: .milliseconds(Int.random(in: 300...900))
            )
            #expect(run.status != 0, "the upload finished before its kill")
            kills += 1
            if run.stderr.contains("resumed at byte") { resumes += 1 }
            #expect(server.bytesReceived <= Int64(size), "the server took in more than the file")
        }
        let last = try await CLI.run(arguments)
        #expect(last.status == 0, "\(last.stderr)")
        #expect(
            server.received("/uploads/campaign.bin")
                == ReceivedUpload(length: Int64(size), sha256: ServerFiles.sha256(count: size))
        )
        #expect(server.bytesReceived <= Int64(size) + Int64(kills) * (1 << 20))
        #expect(server.requests(.post) == 1, "every run after the first resumed the same upload")
        // A run killed before its upload was created (a loaded machine starts processes slowly) has nothing to resume.
        #expect(resumes >= 5 && last.stderr.contains("resumed at byte"), "runs that resumed: \(resumes) of \(kills)")
        #expect(!FileManager.default.fileExists(atPath: file.path + ".courier-upload"))
    }
}
