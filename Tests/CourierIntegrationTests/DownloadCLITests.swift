import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@Suite("courier download", .timeLimit(.minutes(3)))
struct DownloadCLITests {
    @Test func downloadsVerifiesAndRefusesToOverwrite() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let url = server.url("/file/500000?disposition=attachment%3B%20filename%3D%22data.bin%22").absoluteString
            let hash = ServerFiles.sha256(count: 500_000)
            let ok = try await CLI.run(["download", url, "-d", directory.path, "--sha256", hash, "--connections", "2"])
            #expect(ok.status == 0 && ok.stdout == directory.appendingPathComponent("data.bin").path + "\n")
            #expect(ok.stderr.contains("sha256 verified"))
            #expect(try sha256(of: directory.appendingPathComponent("data.bin")) == hash)

            let again = try await CLI.run(["download", url, "-d", directory.path])
            #expect(
                again.status == 1 && again.stderr.hasPrefix("courier: destinationExists: ")
                    && again.stderr.contains("add --overwrite to replace it")
            )
            let replaced = try await CLI.run(["download", url, "-d", directory.path, "--overwrite"])
            #expect(replaced.status == 0)

            let wrong = try await CLI.run([
                "download", server.url("/file/1000").absoluteString, "-o", directory.appendingPathComponent("w").path,
                "--sha256", String(repeating: "0", count: 64),
            ])
            #expect(wrong.status == 1 && wrong.stderr.contains("integrity: sha256 mismatch"))
            #expect(
                !directory.appendingPathComponent("w").exists && !directory.appendingPathComponent("w").partFile.exists
            )

            // A missing directory is refused unless --create-dirs, as curl does; a 404 leaves nothing behind.
            let nested = directory.appendingPathComponent("new/dir/x.bin")
            let refused = try await CLI.run([
                "download", server.url("/file/1000?key=nested").absoluteString, "-o", nested.path,
            ])
            #expect(refused.status == 23 && refused.stderr.contains("does not exist; add --create-dirs to create it"))
            #expect(
                !FileManager.default.fileExists(atPath: directory.appendingPathComponent("new").path)
                    && server.counter("file:nested") == 0
            )
            let created = try await CLI.run([
                "download", server.url("/file/1000").absoluteString, "-o", nested.path, "--create-dirs",
            ])
            #expect(created.status == 0 && nested.exists)
            let missing = directory.appendingPathComponent("404")
            let notFound = try await CLI.run(["download", server.url("/status/404").absoluteString, "-o", missing.path])
            #expect(
                notFound.status == 22 && notFound.stderr.contains("404") && notFound.stderr.contains("/status/404"),
                "\(notFound.stderr)"
            )
            #expect(!notFound.stderr.contains("0 B, 0 B/s"))
            // A refused connection: each retry is told as it happens, then the failure, with curl's exit code 7.
            let unreachable = try await CLI.run([
                "download", "http://127.0.0.1:1/x", "-o", directory.appendingPathComponent("r").path, "--retries", "2",
            ])
            #expect(unreachable.status == 7, "\(unreachable.stderr)")
            #expect(
                unreachable.stderr.hasPrefix(
                    "retry 1 after connectionFailed: connection refused by http://127.0.0.1:1/x\nretry 2 after"
                ),
                "\(unreachable.stderr)"
            )
            #expect(!missing.exists && !missing.partFile.exists && !missing.resumeRecord.exists)

            // --no-resume keeps nothing partial: the same failure leaves no part file and no record.
            let whole = directory.appendingPathComponent("whole")
            let notKept = try await CLI.run([
                "download", server.url("/file/1000").absoluteString, "-o", whole.path, "--no-resume",
                "--sha256", String(repeating: "0", count: 64),
            ])
            #expect(notKept.status == 1 && notKept.stderr.contains("integrity: sha256 mismatch"))
            #expect(!whole.exists && !whole.partFile.exists && !whole.resumeRecord.exists)
        }
    }

    /// A folder nothing can be written in (immutable, so even root is refused) fails before the request is sent,
    /// with the reason, and leaves nothing behind.
    @Test(.enabled(if: immutableFoldersExist, "this filesystem (or user) cannot make a folder immutable"))
    func anUnwritableDirectoryFailsBeforeTheRequest() async throws {
        let directory = try temporaryDownloadDirectory()
        #expect(Self.chattr("+i", directory))
        defer {
            _ = Self.chattr("-i", directory)
            try? FileManager.default.removeItem(at: directory)
        }
        try await withTestServer { server in
            let target = directory.appendingPathComponent("x.bin")
            let outcome = try await CLI.run([
                "download", server.url("/file/1000?key=unwritable").absoluteString, "-o", target.path,
            ])
            #expect(
                outcome.status == 23 && outcome.stderr.contains("courier: fileAccess: cannot open \(target.path).part"),
                "\(outcome.stderr)"
            )
            #expect(server.counter("file:unwritable") == 0, "the request went out")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }
    }

    /// Whether a folder in the temporary directory can be made immutable here (`chattr +i` needs root and a
    /// filesystem that has the flag).
    static let immutableFoldersExist: Bool = {
        guard let directory = try? temporaryDownloadDirectory() else { return false }
        defer { try? FileManager.default.removeItem(at: directory) }
        guard chattr("+i", directory) else { return false }
        return chattr("-i", directory)
    }()

    /// Runs `chattr FLAG PATH`; whether it worked.
    static func chattr(_ flag: String, _ url: URL) -> Bool {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/chattr")
        process.arguments = [flag, url.path]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    @Test func badInputGetsOneClearLine() async throws {
        let cases: [([String], String)] = [
            (["download"], "give either a URL or -i LIST"),
            (["download", "http://127.0.0.1:1/x", "-o", "a", "-d", "b"], "-o and -d exclude each other"),
            (["download", "-i", "list.txt"], "-i needs -d DIR"),
            (["download", "http://127.0.0.1:1/x", "--connections", "0"], "--connections must be between 1 and 16"),
            (
                ["download", "http://127.0.0.1:1/x", "--connections", "2", "--no-resume"],
                "--no-resume downloads over one connection"
            ),
            (["download", "http://127.0.0.1:1/x", "--sha256", "xyz"], "--sha256: \"xyz\" is not a sha256 digest"),
            (["download", "http://127.0.0.1:1/x", "--limit-rate", "fast"], "--limit-rate: \"fast\" is not a rate"),
            (["download", "ftp://example.com/x"], "URL: not a valid http(s) URL"),
            (["download", "-i", "/nonexistent/list", "-d", "/tmp"], "cannot read \"/nonexistent/list\""),
        ]
        for (arguments, message) in cases {
            let outcome = try await CLI.run(arguments)
            #expect(outcome.status != 0 && outcome.stderr.contains(message), "\(arguments): \(outcome.stderr)")
            #expect(!outcome.stderr.contains("Fatal error") && outcome.stdout.isEmpty)
        }
    }

    @Test func aListDownloadsIntoADirectoryWithASummary() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let list = directory.appendingPathComponent("list.txt")
            let lines = [
                "# three files and a missing one", server.url("/file/1000").absoluteString, "",
                server.url("/file/2000").absoluteString, server.url("/status/404").absoluteString,
                server.url("/file/3000").absoluteString,
            ]
            try lines.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
            let target = directory.appendingPathComponent("out")
            let outcome = try await CLI.run(["download", "-i", list.path, "-d", target.path, "--concurrency", "2"])
            #expect(outcome.status == 1)
            #expect(outcome.stderr.contains("4 downloads: 3 completed, 1 failed"))
            #expect(outcome.stderr.contains("failed \(server.url("/status/404").absoluteString): httpStatus: HTTP 404"))
            #expect(
                target.appendingPathComponent("2000").fileSize == 2000
                    && target.appendingPathComponent("3000").fileSize == 3000
            )
        }
    }

    @Test func aFullDiskFailsClearlyAndKeepsThePartialFile() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let target = directory.appendingPathComponent("big.bin")
            let outcome = try await CLI.run(
                ["download", server.url("/file/2000000").absoluteString, "-o", target.path],
                fileSizeLimitKiB: 256
            )
            #expect(outcome.status == 23 && outcome.stderr.contains("courier: diskFull: "), "\(outcome.stderr)")
            #expect(!target.exists && target.partFile.exists && target.partFile.fileSize <= 256 * 1024)
            // With room again, the same command finishes the job from where it stopped.
            let resumed = try await CLI.run(["download", server.url("/file/2000000").absoluteString, "-o", target.path])
            #expect(resumed.status == 0)
            #expect(try sha256(of: target) == ServerFiles.sha256(count: 2_000_000))
        }
    }

    /// A download killed with one connection and run again with `--connections 4` splits what is left four
    /// ways, as aria2 does: the first segment goes on from the bytes on disk (it used one connection for the rest).
    @Test func aResumedDownloadSplitsWhatIsLeftBetweenItsConnections() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let size = 8 << 20
            let url = server.url("/file/\(size)?key=resplit&rate=2000000").absoluteString
            let target = directory.appendingPathComponent("resplit.bin")
            let killed = try await CLI.run(
                ["download", url, "-o", target.path],
                killWhen: { target.resumeRecord.exists }  // a checkpoint names bytes on disk
            )
            #expect(killed.status != 0 && target.partFile.exists)
            let sentBefore = server.counter("file-bytes:resplit")
            let resumed = try await CLI.run([
                "download", url, "-o", target.path, "--connections", "4", "--sha256", ServerFiles.sha256(count: size),
            ])
            #expect(resumed.status == 0, "\(resumed.stderr)")
            #expect(server.counter("file:resplit") == 1 + 1 + 4)  // the killed GET, a HEAD, four ranges
            #expect(server.counter("file-bytes:resplit") - sentBefore < size)  // the bytes on disk were kept
        }
    }

    /// Kill the download with SIGKILL at random moments, run it again each time: it resumes, fetches less than
    /// 1.5 × the file in total, and ends with the right bytes; the destination never holds a partial file.
    @Test(arguments: [1, 3])
    func survivesSIGKILLAndResumes(connections: Int) async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let size = 8 << 20
            let key = "kill-\(connections)"
            // The server paces itself (about 2 MB/s in all), so what it counts as sent is what the client got.
            let url = server.url("/file/\(size)?key=\(key)&rate=\(2_000_000 / connections)").absoluteString
            let target = directory.appendingPathComponent("killed.bin")
            // With several connections the run also keeps a state directory, the path a manager restores from.
            let state = connections > 1 ? ["--state-dir", directory.appendingPathComponent("state").path] : []
            let arguments =
                [
                    "download", url, "-o", target.path, "--connections", String(connections),
                    "--sha256", ServerFiles.sha256(count: size),
                ] + state
            var kills = 0
            for _ in 0..<3 {
                // Killed once the server has sent another 1.5 MB: progress between kills does not depend on how
                // busy the machine is, only the kill's moment within it does.
                let sentBefore = server.counter("file-bytes:\(key)")
                let outcome = try await CLI.run(
                    arguments,
                    killWhen: { server.counter("file-bytes:\(key)") >= sentBefore + 1_500_000 }
                )
                if outcome.status == 0 { break }
                kills += 1
                #expect(!target.exists)  // never a partial file under the final name
            }
            let final = try await CLI.run(arguments)
            #expect(final.status == 0, "\(final.stderr)")
            #expect(try sha256(of: target) == ServerFiles.sha256(count: size))
            #expect(kills >= 2)
            #expect(Double(server.counter("file-bytes:\(key)")) < 1.5 * Double(size))
            if connections > 1 {  // the finished download has left the state directory
                let left = try FileManager.default.contentsOfDirectory(
                    atPath: directory.appendingPathComponent("state").path
                )
                #expect(left.isEmpty, "\(left)")
            }
        }
    }

    /// Two processes, one destination: the second stops at once and touches nothing; the first saves what it
    /// reports, whole (issue 41: the second truncated the first's file, which then reported a wrong file as saved).
    @Test(arguments: [["--no-resume"], []])
    func aSecondProcessForTheSameDestinationStopsAndTheFirstSavesTheWholeFile(extra: [String]) async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let size = 1_500_000
            let key = "two-\(extra.count)"
            let url = server.url("/file/\(size)?rate=1000000&key=\(key)").absoluteString
            let target = directory.appendingPathComponent("shared.bin")
            async let first = CLI.run(["download", url, "-o", target.path, "--sha256", ServerFiles.sha256(count: size)])
            await eventually("the first process is writing") { server.counter("file-bytes:\(key)") > 0 }
            let second = try await CLI.run(["download", url, "-o", target.path] + extra)
            #expect(second.status == 1 && second.stderr.contains("destinationBusy"), "\(second.stderr)")
            let done = try await first
            #expect(done.status == 0, "\(done.stderr)")
            #expect(try sha256(of: target) == ServerFiles.sha256(count: size))
            #expect(!target.partFile.exists && !target.resumeRecord.exists)
        }
    }

    /// What an interrupted download and the run after it showed.
    struct InterruptedRun {
        var interrupted: CLI.Outcome
        var keptAfterInterrupt: Int64
        var partSizeAfterInterrupt: Int
        var recordExisted: Bool
        var resumed: CLI.Outcome
        /// Bytes the server sent to the second run.
        var refetched: Int
    }

    /// Downloads a 2 MB file `/file/2000000?QUERY&key=KEY` (paced at 1 MB/s), interrupts it with Ctrl-C once the
    /// server has sent 400 kB (an event, not a clock a busy machine makes meaningless), then runs it again.
    func interruptAndResume(
        query: String,
        key: String,
        in directory: URL,
        server: TestServer,
        signal: Int32 = SIGINT
    ) async throws -> InterruptedRun {
        let size = 2_000_000
        let url = server.url("/file/\(size)?rate=1000000&\(query)key=\(key)").absoluteString
        let target = directory.appendingPathComponent("\(key).bin")
        let interrupted = try await CLI.run(
            ["download", url, "-o", target.path],
            killWhen: { server.counter("file-bytes:\(key)") >= 400_000 },
            signal: signal
        )
        let kept = ResumeRecordFile.writtenBytes(at: target.resumeRecord) ?? 0
        let (partSize, recordExisted) = (target.partFile.fileSize, target.resumeRecord.exists && !target.exists)
        let sentBefore = server.counter("file-bytes:\(key)")
        let resumed = try await CLI.run([
            "download", url, "-o", target.path, "--sha256", ServerFiles.sha256(count: size),
        ])
        return InterruptedRun(
            interrupted: interrupted,
            keptAfterInterrupt: kept,
            partSizeAfterInterrupt: partSize,
            recordExisted: recordExisted,
            resumed: resumed,
            refetched: server.counter("file-bytes:\(key)") - sentBefore
        )
    }

    /// A server that gives neither ETag nor Last-Modified: a new process still resumes from the saved record (by
    /// length and checksum), not from zero.
    @Test func aRecordWithoutValidatorsIsResumedByTheNextProcess() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let run = try await interruptAndResume(query: "no-validators&", key: "bare", in: directory, server: server)
            #expect(run.interrupted.status == 130 && run.keptAfterInterrupt > 0)
            #expect(run.resumed.status == 0 && run.resumed.stderr.contains("resuming at"), "\(run.resumed.stderr)")
            #expect(run.refetched == 2_000_000 - Int(run.keptAfterInterrupt))
        }
    }

    /// SIGTERM shuts the command's service group down gracefully: the download pauses, its record and part file
    /// stay, the command exits 130, and the next run continues from the part file.
    @Test func sigtermLeavesARecordTheNextRunContinuesFrom() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let run = try await interruptAndResume(
                query: "",
                key: "term",
                in: directory,
                server: server,
                signal: SIGTERM
            )
            #expect(run.interrupted.status == 130 && run.interrupted.stderr.contains("stopping on SIGTERM"))
            #expect(run.recordExisted && run.keptAfterInterrupt > 0)
            #expect(Int(run.keptAfterInterrupt) == run.partSizeAfterInterrupt)
            #expect(run.resumed.status == 0 && run.resumed.stderr.contains("resuming at"), "\(run.resumed.stderr)")
            #expect(run.refetched == 2_000_000 - Int(run.keptAfterInterrupt))
        }
    }

    @Test func ctrlCPausesWithTheRecordSavedAndTheNextRunFinishes() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let run = try await interruptAndResume(query: "", key: "interrupt", in: directory, server: server)
            #expect(
                run.interrupted.status == 130
                    && run.interrupted.stderr.contains("interrupted; the partial download is kept")
            )
            #expect(run.recordExisted)
            let kept = run.keptAfterInterrupt
            #expect(kept > 0 && Int(kept) == run.partSizeAfterInterrupt)
            #expect(run.resumed.status == 0)
            #expect(
                run.resumed.stderr.contains(
                    "resuming at \(ByteCount.format(Int(kept))) of \(ByteCount.format(2_000_000))"
                ),
                "\(run.resumed.stderr)"
            )
            // The next run asks for exactly what the record does not hold: whatever was in flight at the interrupt
            // (socket buffers, more on a busy machine) is the only byte ever sent twice.
            #expect(run.refetched == 2_000_000 - Int(kept))
        }
    }
}
