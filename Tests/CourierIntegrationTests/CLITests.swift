import CourierTesting
import Foundation
import Testing

/// Runs a built executable of the package (`courier` unless told otherwise) as a child process.
struct CLI {
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
        /// With `measuringPeakRSS`, the child's peak resident set in KiB, as the kernel counted it.
        var peakRSSKiB: Int?
    }

    /// Runs `courier` under a small Python parent that prints the child's peak RSS (`getrusage` of its only
    /// child), so the number is the kernel's and not the program's own claim.
    static let peakRSSWrapper = """
        import resource, subprocess, sys
        status = subprocess.call(sys.argv[1:])
        sys.stderr.write("\\npeak_rss_kib=%d\\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        sys.exit(status)
        """

    /// Runs `courier` on a pseudo-terminal (its stdout and stderr both), copying what it writes there to stdout.
    /// With `COURIER_TTY_ANSWER` set, types that line once the program asks for a password.
    static let terminalWrapper = """
        import os, pty, sys
        answer = os.environ.get("COURIER_TTY_ANSWER")
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(sys.argv[1], sys.argv[1:])
        out = b""
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            if answer is not None and b"password" in out:
                os.write(fd, (answer + "\\n").encode())
                answer = None
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(out.decode("utf-8", "replace"))
        sys.exit(os.waitstatus_to_exitcode(status))
        """

    /// The executable `name` beside the test bundle in the build folder; an absolute path as it is.
    static func executable(_ name: String = "courier") -> URL {
        if name.hasPrefix("/") { return URL(filePath: name) }
        var directory = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: directory.appending(path: name).path())
            && directory.pathComponents.count > 1
        {
            directory.deleteLastPathComponent()
        }
        return directory.appending(path: name)
    }

    /// Runs `program` with `arguments`. Output goes to files, and exit is awaited through the termination
    /// handler, so no thread of the cooperative pool blocks (the loopback server in this process needs them).
    /// With `killAfter`, the process gets `signal` (SIGKILL by default) after that long (if still running); with `fileSizeLimitKiB`
    /// it runs under `ulimit -f`, so writes past that size fail as on a full disk. A run still going after `watchdog`
    /// is killed and recorded as an issue. With `discardingStdout`, stdout goes to `/dev/null` (a body too large to
    /// read back).
    ///
    /// With `killWhen`, the signal goes as soon as the condition holds (checked every few milliseconds while the
    /// process runs): a test that must interrupt a transfer midway waits for the transfer (say, the server has sent
    /// N bytes), not for a clock that a busy machine makes meaningless.
    static func run(
        _ arguments: [String],
        program: String = "courier",
        killAfter: Duration? = nil,
        killWhen: (@Sendable () -> Bool)? = nil,
        signal: Int32 = SIGKILL,
        fileSizeLimitKiB: Int? = nil,
        measuringPeakRSS: Bool = false,
        discardingStdout: Bool = false,
        onTerminal: Bool = false,
        environment: [String: String] = [:],
        standardInput: URL? = nil,
        watchdog: Duration = .seconds(240)
    ) async throws -> Outcome {
        let executable = executable(program)
        let directory = FileManager.default.temporaryDirectory
        let outURL = directory.appending(path: "courier-cli-\(UUID().uuidString).out")
        let errURL = directory.appending(path: "courier-cli-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: outURL.path(), contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path(), contents: nil)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let process = Process()
        if let fileSizeLimitKiB {
            process.executableURL = URL(filePath: "/bin/sh")
            process.arguments =
                ["-c", "ulimit -f \(fileSizeLimitKiB) && exec \"$0\" \"$@\"", executable.path] + arguments
        } else if measuringPeakRSS || onTerminal {
            process.executableURL = URL(filePath: "/usr/bin/env")
            process.arguments =
                ["python3", "-c", onTerminal ? terminalWrapper : peakRSSWrapper, executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, own in own }
        }
        process.standardOutput = discardingStdout ? FileHandle.nullDevice : try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = try standardInput.map { try FileHandle(forReadingFrom: $0) } ?? FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { finished in continuation.resume(returning: finished.terminationStatus) }
            do { try process.run() } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
                return
            }
            if let killAfter {
                let pid = process.processIdentifier
                Task {
                    try? await Task.sleep(for: killAfter)
                    kill(pid, signal)
                }
            }
            if let killWhen {
                let pid = process.processIdentifier
                Task {
                    while process.isRunning, !killWhen() { try? await Task.sleep(for: .milliseconds(5)) }
                    if process.isRunning { kill(pid, signal) }
                }
            }
            // A run that never ends would hang the whole test run (nothing here hears the test's cancellation):
            // past the watchdog it is killed, and the test fails saying so.
            let pid = process.processIdentifier
            Task {
                try? await Task.sleep(for: watchdog)
                guard process.isRunning else { return }
                Issue.record("\(program) \(arguments.joined(separator: " ")) did not end within \(watchdog); killed")
                kill(pid, SIGKILL)
            }
        }
        let outData = (try? Data(contentsOf: outURL)) ?? Data()
        let errData = (try? Data(contentsOf: errURL)) ?? Data()
        var stderr = String(decoding: errData, as: UTF8.self)
        var peak: Int?
        if measuringPeakRSS, let marker = stderr.range(of: "\npeak_rss_kib=", options: .backwards) {
            peak = Int(stderr[marker.upperBound...].trimmingCharacters(in: .whitespacesAndNewlines))
            stderr = String(stderr[..<marker.lowerBound])
        }
        return Outcome(
            status: status,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: stderr,
            peakRSSKiB: peak
        )
    }
}

@Suite("The courier CLI", .timeLimit(.minutes(2)))
struct CLITests {
    @Test func getWritesTheBodyToStdoutAndTheStatusToStderr() async throws {
        try await withTestServer { server in
            let outcome = try await CLI.run([
                "get", server.url("/echo").absoluteString, "--param", "q=1", "-H", "X-Trace: 7",
            ])
            #expect(outcome.status == 0)
            #expect(outcome.stderr == "HTTP 200\n")
            #expect(outcome.stdout.contains(#""q":"1""#) && outcome.stdout.contains(#""x-trace":["7"]"#))
        }
    }

    @Test func everyMethodAndBodyKind() async throws {
        try await withTestServer { server in
            let echo = server.url("/echo").absoluteString
            let post = try await CLI.run(["post", echo, "--json", #"{"a":1}"#])
            #expect(
                post.status == 0 && post.stdout.contains(#""body":"{\"a\":1}""#)
                    && post.stdout.contains(#""method":"POST""#)
            )
            let put = try await CLI.run(["put", echo, "--data-urlencode", "name=ada", "--data-urlencode", "x=a b"])
            #expect(put.status == 0 && put.stdout.contains(#""body":"name=ada&x=a+b""#) && put.stdout.contains("PUT"))
            for method in ["delete", "patch"] {
                let outcome = try await CLI.run([method, echo])
                #expect(outcome.status == 0 && outcome.stdout.contains(#""method":"\#(method.uppercased())""#))
            }
            let head = try await CLI.run(["head", server.url("/bytes/100").absoluteString])
            #expect(head.status == 0 && head.stdout.hasPrefix("HTTP/1.1 200 OK\r\n") && head.stderr.isEmpty)
        }
    }

    @Test func outputFileIsWrittenWhole() async throws {
        let path = FileManager.default.temporaryDirectory.appending(path: "courier-cli-\(UUID().uuidString)").path()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await withTestServer { server in
            let outcome = try await CLI.run(["get", server.url("/bytes/50000").absoluteString, "-o", path])
            #expect(outcome.status == 0 && outcome.stdout.isEmpty)
            #expect(FileManager.default.contents(atPath: path) == ServerFiles.data(count: 50_000))
            let failed = try await CLI.run([
                "get", server.url("/fault/close-at/10").absoluteString, "-o", path + ".broken",
            ])
            #expect(failed.status == 1)
            #expect(!FileManager.default.fileExists(atPath: path + ".broken"))
        }
    }

    /// Any answer is a success, as in curl; `-f` makes a 4xx or 5xx exit 22 with no body written, and xh's
    /// `--check-status` exits 3, 4 or 5 after writing it.
    @Test func httpErrorsExitZeroUnlessFailOrCheckStatusAsks() async throws {
        try await withTestServer { server in
            let notFound = try await CLI.run(["get", server.url("/status/404").absoluteString])
            #expect(notFound.status == 0 && notFound.stderr == "HTTP 404\n" && notFound.stdout == "status 404")
            let failed = try await CLI.run(["get", server.url("/status/404").absoluteString, "-f"])
            #expect(failed.status == 22 && failed.stdout.isEmpty, "\(failed)")
            #expect(failed.stderr.contains("courier: httpStatus: HTTP 404 Not Found"), "\(failed.stderr)")
            let quiet = try await CLI.run(["-sf", server.url("/status/404").absoluteString])
            #expect(quiet.status == 22 && quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet)")
            let shown = try await CLI.run(["-sSf", server.url("/status/503").absoluteString])
            #expect(shown.status == 22 && shown.stderr.contains("503"), "\(shown)")
            let found = try await CLI.run(["-f", server.url("/status/200").absoluteString])
            #expect(found.status == 0, "\(found)")
            for (code, status) in [(503, 5), (404, 4), (302, 3), (200, 0)] as [(Int, Int32)] {
                let checked = try await CLI.run(
                    ["--check-status", server.url("/status/\(code)").absoluteString, "--max-redirs", "0"]
                )
                #expect(checked.status == status, "\(code): \(checked)")
                if code >= 400 { #expect(checked.stdout == "status \(code)", "the body is still written") }
            }
        }
    }

    @Test func batchPrintsOneLinePerRequestInOrder() async throws {
        try await withTestServer { server in
            let list = FileManager.default.temporaryDirectory.appending(path: "courier-batch-\(UUID().uuidString).txt")
            defer { try? FileManager.default.removeItem(at: list) }
            let lines = [
                "# a comment", server.url("/delay/100").absoluteString, "",
                "POST \(server.url("/echo").absoluteString)",
                "get \(server.url("/status/404").absoluteString)", server.url("/small").absoluteString,
            ]
            try Data(lines.joined(separator: "\n").utf8).write(to: list)
            let outcome = try await CLI.run(["batch", list.path, "--concurrency", "4"])
            #expect(outcome.status == 1)
            #expect(
                outcome.stdout.split(separator: "\n").map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
                    == ["200 GET", "200 POST", "404 GET", "200 GET"]
            )
            #expect(!outcome.stdout.contains("ERR"))
            try Data("http://127.0.0.1:1/x\n".utf8).write(to: list)
            let refused = try await CLI.run(["batch", list.path])
            #expect(refused.status == 1 && refused.stdout.hasPrefix("ERR GET http://127.0.0.1:1/x: connectionFailed: "))
            #expect(outcome.stderr.hasPrefix("4 requests: 3 succeeded, 1 failed in "))

            try Data(
                [server.url("/small").absoluteString, server.url("/json").absoluteString].joined(separator: "\n").utf8
            ).write(to: list)
            let clean = try await CLI.run(["batch", list.path, "--fail-fast"])
            #expect(clean.status == 0 && clean.stderr.hasPrefix("2 requests: 2 succeeded, 0 failed"))

            try Data("GET http://x y z\n".utf8).write(to: list)
            let bad = try await CLI.run(["batch", list.path])
            #expect(
                bad.status == 1 && bad.stderr == "courier: invalidParameter: line 1: expected 'METHOD URL' or 'URL'\n"
            )
            let missing = try await CLI.run(["batch", "/nonexistent/list.txt"])
            #expect(
                missing.status == 26 && missing.stderr.hasPrefix("courier: cannot read \"/nonexistent/list.txt\": "),
                "\(missing.stderr)"
            )
        }
    }

    @Test func retriesAndTimeouts() async throws {
        try await withTestServer { server in
            let retried = try await CLI.run([
                "get", server.url("/flaky/cli?failures=1").absoluteString, "--retries", "2",
            ])
            #expect(retried.status == 0 && server.hits("/flaky/cli") == 2)
            // Each retry is told on stderr, as aria2 does, before the status line.
            let lines = retried.stderr.split(separator: "\n")
            #expect(
                lines.count == 2 && lines[0].hasPrefix("retry 1/2 after ")
                    && lines[0].hasSuffix(" ms: HTTP 503 Service Unavailable")
                    && lines[1] == "HTTP 200",
                "\(retried.stderr)"
            )
            let slow = try await CLI.run(["get", server.url("/delay/3000").absoluteString, "--timeout", "0.3"])
            #expect(slow.status == 28)
            #expect(slow.stderr.hasPrefix("courier: timeout: total timeout of 300 ms elapsed"))
            // --read-timeout bounds each wait for the answer, apart from the whole exchange.
            let silent = try await CLI.run([
                "get", server.url("/delay/3000").absoluteString, "--read-timeout", "0.3", "--timeout", "20",
            ])
            #expect(
                silent.status == 28 && silent.stderr.hasPrefix("courier: timeout: readIdle timeout of 300 ms elapsed"),
                "\(silent.stderr)"
            )
            let patient = try await CLI.run(["get", server.url("/delay/300").absoluteString, "--read-timeout", "5"])
            #expect(patient.status == 0, "\(patient.stderr)")
        }
    }

    @Test(arguments: [
        (
            ["get", "http://127.0.0.1:1/x", "-H", "X-Evil: a\r\nInjected: 1"],
            "courier: -H: header \"X-Evil\" has a value containing CR"
        ),
        (
            ["get", "http://127.0.0.1:1/x", "-H", "no colon"],
            "courier: -H: header \"no colon\" is not of the form 'Name: value'"
        ),
        (["get", "not a url"], "courier: URL: URL contains a space or control character: \"not a url\""),
        (["get", "ftp://example.com/x"], "courier: URL: not a valid http(s) URL: \"ftp://example.com/x\""),
        (["post", "http://127.0.0.1:1/x", "--json", "{nope"], "courier: --json: the JSON body is not valid JSON"),
        (
            ["get", "http://127.0.0.1:1/x", "--param", "novalue"],
            "courier: --param: parameter \"novalue\" is not of the form key=value"
        ),
        (
            ["get", "http://127.0.0.1:1/x", "--timeout=-1"],
            "courier: --timeout: \"-1\" is not a positive number of seconds"
        ),
        (
            ["get", "http//127.0.0.1:1/x"],
            "courier: URL: the scheme is missing its colon (did you mean http://127.0.0.1:1/x): \"http//127.0.0.1:1/x\""
        ),
        (["get", "/echo"], "courier: URL: a URL needs a host, such as http://127.0.0.1:8080/path: \"/echo\""),
        (
            ["get", "http://courier..invalid/x"],
            "courier: connectionFailed: could not resolve the host name \"courier..invalid\""
        ),
    ])
    func badInputIsOneClearLine(arguments: [String], message: String) async throws {
        let outcome = try await CLI.run(arguments)
        // A value from the command line that cannot be used is a usage error (64); a name that does not resolve, 6.
        #expect(outcome.status == (message.contains("resolve") ? 6 : 64))
        #expect(outcome.stderr == message + "\n")
        #expect(outcome.stdout.isEmpty)
    }

    @Test func aURLWithoutSchemeIsHTTPAsInCurlAndRetriesMustNotBeNegative() async throws {
        try await withTestServer { server in
            let bare = try await CLI.run(["get", "127.0.0.1:\(server.port)/echo"])
            #expect(bare.status == 0 && bare.stdout.contains("\"method\":\"GET\"") && bare.stderr == "HTTP 200\n")
        }
        let negative = try await CLI.run(["get", "http://127.0.0.1:1/x", "--retries", "-1"])
        #expect(
            negative.status == 64 && negative.stderr.hasPrefix("Error: --retries must be between 0 and 20"),
            "\(negative.stderr)"
        )
    }

    @Test func onATerminalTheStatusLineComesBeforeTheBody() async throws {
        try await withTestServer { server in
            // As xh shows an answer: the status line first, on its own line, then the body.
            let shown = try await CLI.run(["get", server.url("/json").absoluteString], onTerminal: true)
            #expect(
                shown.status == 0 && shown.stdout.hasPrefix("HTTP 200\r\n{") && shown.stdout.hasSuffix("}\r\n"),
                "\(shown.stdout.prefix(40).debugDescription)"
            )
            // Into a pipe or a file the body stays byte for byte what the server sent.
            let piped = try await CLI.run(["get", server.url("/json").absoluteString])
            #expect(piped.stdout.hasSuffix("}") && piped.stderr == "HTTP 200\n")
        }
    }

    @Test func anUnknownCommandIsNamedWithTheNearestOne() async throws {
        let typo = try await CLI.run(["gett", "http://127.0.0.1:1/x"])
        #expect(
            typo.status == 64
                && typo.stderr == "courier: unknown command 'gett'; did you mean 'get'? (see courier --help)\n"
        )
        let unknown = try await CLI.run(["xyzzy"])
        #expect(unknown.status == 64 && unknown.stderr == "courier: unknown command 'xyzzy' (see courier --help)\n")
        let help = try await CLI.run(["help", "get"])
        #expect(help.status == 0 && help.stdout.contains("USAGE: courier get"))
    }

    @Test func connectionFailureIsOneLine() async throws {
        let outcome = try await CLI.run(["get", "http://127.0.0.1:1/x", "--timeout", "5"])
        #expect(outcome.status == 7)
        #expect(outcome.stderr.hasPrefix("courier: connectionFailed:"))
        #expect(outcome.stderr.split(separator: "\n").count == 1)
    }

    @Test func verboseLogsWithoutSecrets() async throws {
        try await withTestServer { server in
            let outcome = try await CLI.run([
                "get", server.url("/small").absoluteString, "-v", "-H", "Authorization: Bearer cli-secret",
            ])
            #expect(outcome.status == 0)
            #expect(outcome.stderr.contains("→ GET") && outcome.stderr.contains("← 200"))
            #expect(!outcome.stderr.contains("cli-secret"))
        }
    }

    @Test func helpHasExamplesAndUsageErrorsAreShort() async throws {
        for command in [["--help"], ["get", "--help"], ["serve", "--help"], ["demo", "--help"]] {
            let help = try await CLI.run(command)
            #expect(help.status == 0 && help.stdout.contains("Example"), "\(command)")
        }
        let missing = try await CLI.run(["get"])
        #expect(missing.status != 0 && !missing.stderr.contains("Fatal error"))
        // Paragraphs are left for swift-argument-parser to wrap: no line ends where the source broke it.
        let download = try await CLI.run(["download", "--help"]).stdout
        #expect(
            download.contains("checked (length, then --sha256) and renamed") && download.contains("-d <dir>")
                && download.contains("-i <list>")
        )
        let serve = try await CLI.run(["serve", "--help"]).stdout
        #expect(serve.contains("/flaky/KEY") && serve.contains("/cache/KEY"))
        let batch = try await CLI.run(["batch", "--help"]).stdout
        #expect(batch.contains("(default: 8)") && !batch.contains("(default 8)"), "each default once")
    }

    @Test func demoRunsOfflineAndPasses() async throws {
        let outcome = try await CLI.run(["demo"])
        #expect(outcome.status == 0, "\(outcome.stdout)\n\(outcome.stderr)")
        #expect(outcome.stdout.contains("steps behaved as expected"))
        #expect(!outcome.stdout.contains("✘"))
    }
}
