import CourierTesting
import Foundation
import Testing

/// What the CLI writes, against hostile bodies and hostile places to write them: output that grows in step with
/// the input, `-o` that never replaces what its path names, and writes that fail without a trap.
@Suite("The CLI's output under hostile bodies and destinations", .timeLimit(.minutes(3)))
struct CLIOutputSafetyTests {
    /// Runs `script` with bash, `$COURIER` naming the built CLI; returns its status and what it printed.
    func shell(_ script: String) async throws -> CLI.Outcome {
        try await CLI.run(
            ["-c", script],
            program: "/bin/bash",
            environment: ["COURIER": CLI.executable().path(percentEncoded: false)]
        )
    }

    /// A body nested 20,000 deep prints in size proportional to it (compact past 32 levels), in flat memory;
    /// indenting every level would have printed about 400 MB.
    @Test func deeplyNestedJSONPrintsInLinearSize() async throws {
        try await withTestServer { server in
            let outcome = try await CLI.run(
                ["get", server.url("/fault/deep-json?depth=20000").absoluteString, "--pretty", "format"],
                measuringPeakRSS: true
            )
            #expect(outcome.status == 0, "\(outcome.stderr)")
            #expect(outcome.stdout.utf8.count < 200_000, "\(outcome.stdout.utf8.count) bytes")
            #expect(outcome.stdout.filter { $0 == "[" }.count == 20_000)
            #expect(try #require(outcome.peakRSSKiB) < 64 * 1024)
        }
    }

    /// A gzip body of 512 MiB of zeros goes to stdout in flat memory: each decoded piece is at most 64 KiB.
    @Test func aDecompressionBombToStdoutStaysFlat() async throws {
        try await withTestServer { server in
            let outcome = try await CLI.run(
                ["get", server.url("/fault/bomb?mib=512").absoluteString, "-s"],
                measuringPeakRSS: true,
                discardingStdout: true
            )
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let peak = try #require(outcome.peakRSSKiB)
            #expect(peak < 64 * 1024, "peak RSS \(peak) KiB")
        }
    }

    /// `--max-filesize 10M` names 10 MiB when a decoded body passes it, not one byte more.
    @Test func theFileSizeLimitNamesItsOwnSize() async throws {
        try await withTestServer { server in
            let outcome = try await CLI.run(
                ["get", server.url("/fault/bomb?mib=16").absoluteString, "--max-filesize", "10M"],
                discardingStdout: true
            )
            #expect(outcome.status == 63)
            #expect(outcome.stderr.contains("--max-filesize (10.0 MiB)"), "\(outcome.stderr)")
            #expect(!outcome.stderr.contains("10485761"), "\(outcome.stderr)")
        }
    }

    /// `-o` through a symbolic link writes the file the link names (also one that does not exist yet), and the
    /// link stays a link.
    @Test func writingThroughASymbolicLinkKeepsTheLink() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-symlink")
        defer { try? FileManager.default.removeItem(at: directory) }
        let real = directory.appending(path: "real.bin")
        try Data("old".utf8).write(to: real)
        let link = directory.appending(path: "link.bin")
        try FileManager.default.createSymbolicLink(atPath: link.path(), withDestinationPath: "real.bin")
        let dangling = directory.appending(path: "dangling.bin")
        try FileManager.default.createSymbolicLink(atPath: dangling.path(), withDestinationPath: "made.bin")
        try await withTestServer { server in
            for path in [link, dangling] {
                let outcome = try await CLI.run([
                    "get", server.url("/bytes/100").absoluteString, "-o", path.path(), "-s",
                ])
                #expect(outcome.status == 0, "\(outcome.stderr)")
                let kind = try FileManager.default.attributesOfItem(atPath: path.path())[.type] as? FileAttributeType
                #expect(kind == .typeSymbolicLink)
            }
        }
        #expect(try Data(contentsOf: real) == ServerFiles.data(count: 100))
        #expect(try Data(contentsOf: directory.appending(path: "made.bin")) == ServerFiles.data(count: 100))
    }

    /// `-w` escapes what a server controls on a terminal as `-i` does: a Content-Type holding U+009B (C1's 8-bit
    /// CSI) reached the terminal raw. `script` gives the command a terminal.
    @Test func writeOutEscapesTheServersControlCharactersOnATerminal() async throws {
        let outcome = try await withTestServer { server in
            let url = server.url("/response-headers?Content-Type=text/x%C2%9B31m").absoluteString
            return try await shell(
                "script -qec \"\\\"$COURIER\\\" -s -o /dev/null -w '[%{content_type}]' '\(url)'\" /dev/null < /dev/null"
            )
        }
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.contains("[text/x\\x9B31m]"), "\(outcome.stdout)")
        #expect(!outcome.stdout.unicodeScalars.contains("\u{9B}"))
    }

    /// `--har FILE` and `-c FILE` follow `-o`'s rule: through a symbolic link (the link stays), straight into a
    /// FIFO or the process's own standard output (`/proc/self/fd/1`), which each had been replaced by a regular file.
    @Test(arguments: ["--har", "-c"])
    func theHARFileAndTheCookieJarKeepWhatThePathNames(option: String) async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-named")
        defer { try? FileManager.default.removeItem(at: directory) }
        let expected = option == "--har" ? "\"entries\"" : "session"
        let outcome = try await withTestServer { server in
            try await shell(
                """
                cd '\(directory.path())' && ln -s real.txt link && mkfifo pipe && (cat pipe > received &) && \
                "$COURIER" -s -o /dev/null '\(server.url("/set-cookies?session=abc").absoluteString)' \
                    \(option) link && \
                "$COURIER" -s -o /dev/null '\(server.url("/set-cookies?session=abc").absoluteString)' \
                    \(option) pipe && wait && sleep 0.2 && \
                "$COURIER" -s -o /dev/null '\(server.url("/set-cookies?session=abc").absoluteString)' \
                    \(option) /proc/self/fd/1 > stdout.txt && \
                test -L link && test -p pipe && grep -c '\(expected)' real.txt received stdout.txt
                """
            )
        }
        #expect(outcome.status == 0, "\(outcome.stdout) \(outcome.stderr)")
        #expect(outcome.stdout.split(separator: "\n").allSatisfy { !$0.hasSuffix(":0") }, "\(outcome.stdout)")
    }

    /// `-o` to a path that is no regular file (here a FIFO; `/dev/null` and `/dev/stdout` alike) writes to it and
    /// leaves it what it was.
    @Test func writingToAFIFOWritesThroughIt() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-fifo")
        defer { try? FileManager.default.removeItem(at: directory) }
        let outcome = try await withTestServer { server in
            try await shell(
                """
                cd '\(directory.path())' && mkfifo pipe && (cat pipe > received &) && \
                "$COURIER" get '\(server.url("/bytes/1000").absoluteString)' -o pipe -s && wait && sleep 0.2 && \
                test -p pipe && wc -c < received
                """
            )
        }
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1000")
    }

    /// `-o /dev/stdout` writes to whatever the process's stdout is, a pipe or a redirected file, as curl does.
    @Test func writingToDevStdoutReachesThePipeOrTheFile() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-stdout")
        defer { try? FileManager.default.removeItem(at: directory) }
        let outcome = try await withTestServer { server in
            try await shell(
                """
                cd '\(directory.path())' && \
                "$COURIER" get '\(server.url("/bytes/1000").absoluteString)' -o /dev/stdout -s | wc -c && \
                "$COURIER" get '\(server.url("/bytes/700").absoluteString)' -o /dev/stdout -s > redirected && \
                wc -c < redirected
                """
            )
        }
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(
            outcome.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) } == ["1000", "700"]
        )
    }

    /// A reader that goes away (`| head`) ends the command with 23 and no word, never a trap (exit 132).
    @Test func aClosedPipeEndsQuietlyWithAWriteError() async throws {
        let outcome = try await withTestServer { server in
            try await shell(
                """
                "$COURIER" get '\(server.url("/bytes/10000000").absoluteString)' | head -c 10 > /dev/null
                echo "get=${PIPESTATUS[0]}"
                "$COURIER" events '\(server.url("/events?count=0&interval=5").absoluteString)' --json | head -n 1
                echo "events=${PIPESTATUS[0]}"
                """
            )
        }
        #expect(outcome.stdout.contains("get=23"), "\(outcome.stdout) \(outcome.stderr)")
        #expect(outcome.stdout.contains("events=23"), "\(outcome.stdout) \(outcome.stderr)")
        #expect(outcome.stdout.contains(#"{"data":"{\"n\":1}""#), "\(outcome.stdout)")
        #expect(!outcome.stderr.contains("Fatal error") && !outcome.stderr.contains("courier:"), "\(outcome.stderr)")
    }

    /// A full stderr does not undo a transfer that succeeded.
    @Test func aFullStderrDoesNotFailASuccessfulTransfer() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-full")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appending(path: "f.bin").path()
        let outcome = try await withTestServer { server in
            try await shell(
                """
                "$COURIER" get '\(server.url("/bytes/1000").absoluteString)' -o '\(file)' 2>/dev/full
                echo "status=$?"
                """
            )
        }
        #expect(outcome.stdout.contains("status=0"), "\(outcome.stdout) \(outcome.stderr)")
        #expect(try Data(contentsOf: URL(filePath: file)) == ServerFiles.data(count: 1000))
    }
}
