import CourierTesting
import Foundation
import Testing

/// The habits of curl and xh that `courier get` and its siblings keep, each run as the built binary.
@Suite("courier's daily habits: output, input, credentials", .timeLimit(.minutes(3)))
struct CLIHabitTests {
    @Test func headersStatusLineAndWriteOut() async throws {
        try await withTestServer { server in
            let included = try await CLI.run(["get", server.url("/echo").absoluteString, "-i"])
            #expect(included.status == 0)
            #expect(
                included.stdout.hasPrefix("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"),
                "\(included.stdout.prefix(80))"
            )
            #expect(included.stdout.contains("\r\n\r\n{\"body\""))

            let headOnly = try await CLI.run(["get", server.url("/bytes/10").absoluteString, "-I"])
            #expect(
                headOnly.status == 0
                    && headOnly.stdout
                        == "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 10\r\n\r\n",
                "\(headOnly.stdout.debugDescription)"
            )
            #expect(server.requests("/bytes/10").last?.method == "HEAD")
            let head = try await CLI.run(["head", server.url("/bytes/10").absoluteString])
            #expect(head.stdout == headOnly.stdout && head.stderr.isEmpty)

            let silent = try await CLI.run(["get", server.url("/small").absoluteString, "-s"])
            #expect(silent.status == 0 && silent.stderr.isEmpty && !silent.stdout.isEmpty)

            let format =
                "\\n%{http_code} %{num_redirects} %{size_download} %{url_effective} %{time_starttransfer} %{time_total}\\n"
            let written = try await CLI.run(["get", server.url("/redirect/2").absoluteString, "-s", "-w", format])
            let line = written.stdout.split(separator: "\n").last.map(String.init) ?? ""
            let words = line.split(separator: " ").map(String.init)
            #expect(words.count == 6, "\(written.stdout)")
            if words.count == 6 {
                #expect(words[0] == "200" && words[1] == "2" && words[3] == server.url("/redirect/0").absoluteString)
                #expect(Int(words[2]) == written.stdout.utf8.count - line.utf8.count - 2)
                let (start, total) = (Double(words[4]) ?? -1, Double(words[5]) ?? -1)
                #expect(start > 0 && start <= total, "\(line)")
            }
            let unknown = try await CLI.run(["get", server.url("/small").absoluteString, "-w", "%{nope}"])
            #expect(unknown.status == 64 && unknown.stderr.contains("unknown variable %{nope}"))
            // -w @FILE reads the format from the file, as curl does.
            let formatFile = try newTemporaryDirectory(prefix: "courier-w").appending(path: "format")
            try Data("code=%{http_code}\\n".utf8).write(to: formatFile)
            let fromFile = try await CLI.run(
                ["get", server.url("/small").absoluteString, "-s", "-o", "/dev/null", "-w", "@" + formatFile.path()]
            )
            #expect(fromFile.status == 0 && fromFile.stdout == "code=200\n", "\(fromFile.stdout) \(fromFile.stderr)")
            let missing = try await CLI.run(["get", server.url("/small").absoluteString, "-w", "@/no/such/format"])
            #expect(missing.status == 26, "\(missing.stderr)")

            let notFollowed = try await CLI.run([
                "get", server.url("/redirect/1").absoluteString, "--max-redirs", "0", "-i", "-s",
            ])
            #expect(
                notFollowed.status == 0 && notFollowed.stdout.hasPrefix("HTTP/1.1 302 Found\r\n")
                    && server.hits("/redirect/0") == 1
            )
            let curlHabit = try await CLI.run(["get", server.url("/redirect/1").absoluteString, "-L", "-s"])
            #expect(curlHabit.status == 0 && server.hits("/redirect/0") == 2)
        }
    }

    /// `-o` streams into a temporary file renamed at the end; stdout streams too, byte for byte into a pipe.
    /// curl's way with `-H` and with options before the command's name, seen from the server.
    @Test func headersAndOptionsBeforeTheCommandAsCurlHasThem() async throws {
        try await withTestServer { server in
            let url = server.url("/echo").absoluteString
            let run = try await CLI.run(["get", url, "-H", "X-A: 1", "-H", "X-A: 2", "-H", "Accept-Encoding:"])
            #expect(run.status == 0, "\(run.stderr)")
            let sent = try #require(server.requests("/echo").last)
            #expect(sent.headers.filter { $0.name.lowercased() == "x-a" }.map(\.value) == ["1", "2"])
            #expect(sent.header("accept-encoding") == nil, "Accept-Encoding: with no value removes the default")
            let replaced = try await CLI.run(["get", url, "-H", "User-Agent: mine", "-s"])
            #expect(replaced.status == 0 && server.requests("/echo").last?.header("user-agent") == "mine")
            // An option before the command's name: the name is the command, not the host.
            for (typed, method) in [(["-s", "put", url, "-d", "a=1"], "PUT"), (["-i", "delete", url], "DELETE")] {
                let moved = try await CLI.run(typed)
                #expect(moved.status == 0, "\(typed): \(moved.stderr)")
                #expect(server.requests("/echo").last?.method == method, "\(typed)")
            }
            #expect(server.hits("/echo") == 4)
        }
    }

    @Test func bodiesStreamToAFileOrStdout() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-stream")
        let target = directory.appending(path: "body.bin")
        try await withTestServer { server in
            let saved = try await CLI.run([
                "get", server.url("/bytes/3000000").absoluteString, "-o", target.path(), "-s",
            ])
            #expect(saved.status == 0 && saved.stdout.isEmpty, "\(saved.stderr)")
            #expect((try FileManager.default.attributesOfItem(atPath: target.path())[.size] as? Int) == 3_000_000)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path()) == ["body.bin"])

            // A body cut short leaves the old file as it was and no temporary one.
            let cut = try await CLI.run([
                "get", server.url("/fault/close-at/5000?size=100000").absoluteString, "-o", target.path(),
            ])
            #expect(cut.status != 0)
            #expect((try FileManager.default.attributesOfItem(atPath: target.path())[.size] as? Int) == 3_000_000)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path()) == ["body.bin"])

            let missingFolder = try await CLI.run([
                "get", server.url("/small").absoluteString, "-o", directory.appending(path: "no/such").path(),
            ])
            #expect(missingFolder.status == 23 && missingFolder.stderr.contains("does not exist"))

            let piped = try await CLI.run(["get", server.url("/json").absoluteString, "-s"])
            #expect(
                piped.stdout == #"{"id":1,"name":"courier","served":1}"# || piped.stdout.hasPrefix(#"{"id":1"#),
                "\(piped.stdout)"
            )
            #expect(!piped.stdout.contains("\n") && !piped.stdout.contains("\u{1B}"))
        }
    }

    /// A body larger than the library's 256 MiB in-memory limit streams to `-o` with the child's peak RSS flat.
    @Test func aGigabyteStreamsInFlatMemory() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-gigabyte")
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appending(path: "big.bin")
        try await withTestServer { server in
            let outcome = try await CLI.run(
                ["get", server.url("/bytes/1073741824").absoluteString, "-o", target.path(), "-s"],
                measuringPeakRSS: true
            )
            #expect(outcome.status == 0, "\(outcome.stderr)")
            #expect((try FileManager.default.attributesOfItem(atPath: target.path())[.size] as? Int) == 1 << 30)
            let peak = try #require(outcome.peakRSSKiB)
            #expect(peak < 64 * 1024, "peak RSS \(peak) KiB")
        }
    }

    /// On a terminal JSON is re-indented and coloured; NO_COLOR and --pretty turn that down.
    @Test func jsonOnATerminalIsPrettyAndColoured() async throws {
        try await withTestServer { server in
            let url = server.url("/json").absoluteString
            let coloured = try await CLI.run(["get", url], onTerminal: true, environment: ["NO_COLOR": ""])
            #expect(
                coloured.stdout.contains("{\r\n  \u{1B}[34m\"id\"\u{1B}[0m: \u{1B}[36m1\u{1B}[0m,"),
                "\(coloured.stdout.debugDescription)"
            )
            let plain = try await CLI.run(["get", url], onTerminal: true, environment: ["NO_COLOR": "1"])
            #expect(
                plain.stdout.contains("{\r\n  \"id\": 1,\r\n  \"name\": \"courier\","),
                "\(plain.stdout.debugDescription)"
            )
            let raw = try await CLI.run(["get", url, "--pretty", "none"], onTerminal: true)
            #expect(raw.stdout.contains(#"{"id":1,"name":"courier""#))
            let included = try await CLI.run(["get", url, "-i"], onTerminal: true, environment: ["NO_COLOR": ""])
            #expect(
                included.stdout.contains("\u{1B}[32m200")
                    && included.stdout.contains("\u{1B}[36mContent-Type\u{1B}[0m: application/json")
            )
        }
    }

    @Test func bodiesFromTextFilesAndStandardInput() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-input")
        let file = directory.appending(path: "body.json")
        try Data(#"{"from":"file"}"#.utf8).write(to: file)
        try await withTestServer { server in
            let url = server.url("/echo").absoluteString
            let fromFile = try await CLI.run(["post", url, "-d", "@" + file.path(), "-s"])
            #expect(
                fromFile.status == 0 && fromFile.stdout.contains(#""body":"{\"from\":\"file\"}""#),
                "\(fromFile.stdout)"
            )
            #expect(server.requests("/echo").last?.header("content-type") == "application/x-www-form-urlencoded")
            #expect(server.requests("/echo").last?.header("content-length") == "15")

            let json = try await CLI.run(["post", url, "--json", "@" + file.path(), "-s"])
            #expect(json.status == 0 && server.requests("/echo").last?.header("content-type") == "application/json")
            #expect(server.requests("/echo").last?.header("accept") == "application/json")
            let ownAccept = try await CLI.run(["post", url, "--json", "{}", "-H", "Accept: text/plain", "-s"])
            #expect(ownAccept.status == 0 && server.requests("/echo").last?.header("accept") == "text/plain")
            let notJSON = try await CLI.run(["post", url, "--json", "{nope"])
            #expect(notJSON.status == 64 && notJSON.stderr.contains("--json"))

            let fromStdin = try await CLI.run(["put", url, "-d", "@-", "-s"], standardInput: file)
            #expect(
                fromStdin.status == 0 && fromStdin.stdout.contains(#""body":"{\"from\":\"file\"}""#),
                "\(fromStdin.stderr)"
            )
            #expect(server.requests("/echo").last?.header("transfer-encoding") == "chunked")

            let form = try await CLI.run(["post", url, "--data-urlencode", "note@" + file.path(), "-s"])
            #expect(form.status == 0 && form.stdout.contains("note=%7B%22from%22%3A%22file%22%7D"), "\(form.stdout)")
        }
    }

    @Test func credentialsUserAgentShorthandAndVersion() async throws {
        try await withTestServer { server in
            let url = server.url("/echo").absoluteString
            _ = try await CLI.run(["get", url])
            #expect(server.requests("/echo").last?.header("user-agent") == "courier/0.1.0")
            _ = try await CLI.run(["get", url, "-A", "probe/2"])
            #expect(server.requests("/echo").last?.header("user-agent") == "probe/2")
            _ = try await CLI.run(["get", url, "-H", "User-Agent:"])
            #expect(server.requests("/echo").last?.header("user-agent") == nil)

            let basic = try await CLI.run(["get", url, "-u", "ada:s3cret", "-v"])
            #expect(
                server.requests("/echo").last?.header("authorization") == "Basic "
                    + Data("ada:s3cret".utf8).base64EncodedString()
            )
            #expect(
                !basic.stderr.contains("s3cret")
                    && !basic.stderr.contains(Data("ada:s3cret".utf8).base64EncodedString())
            )
            // No terminal to ask on: a usage error, never an empty password sent silently.
            let seen = server.requests("/echo").count
            let unasked = try await CLI.run(["get", url, "-u", "ada"])
            #expect(unasked.status == 64 && unasked.stderr.contains("-u: no password given"), "\(unasked.stderr)")
            #expect(server.requests("/echo").count == seen, "nothing was sent")
            // On a terminal, -u with no password asks for one without echoing it.
            let prompted = try await CLI.run(
                ["get", url, "-u", "ada", "-s"],
                onTerminal: true,
                environment: ["COURIER_TTY_ANSWER": "typed-pw"]
            )
            #expect(
                prompted.status == 0 && prompted.stdout.contains("Enter the password for 'ada'"),
                "\(prompted.stdout)"
            )
            #expect(!prompted.stdout.contains("typed-pw"))
            #expect(
                server.requests("/echo").last?.header("authorization") == "Basic "
                    + Data("ada:typed-pw".utf8).base64EncodedString()
            )
            _ = try await CLI.run(["get", url, "--oauth2-bearer", "tok-1"])
            #expect(server.requests("/echo").last?.header("authorization") == "Bearer tok-1")

            let shorthand = try await CLI.run([url, "-s"])
            #expect(shorthand.status == 0 && server.requests("/echo").last?.method == "GET")
            let bare = try await CLI.run(["127.0.0.1:\(server.port)/echo", "-s"])
            #expect(bare.status == 0 && bare.stdout.contains(#""method":"GET""#))
        }
        let version = try await CLI.run(["--version"])
        #expect(version.status == 0 && version.stdout == "0.1.0\n")
        // `--version` alone is answered before swift-argument-parser runs; after a command it still answers.
        let commandVersion = try await CLI.run(["get", "--version"])
        #expect(commandVersion.status == 0 && commandVersion.stdout == version.stdout)
    }

    /// Each command's help shows its examples whole at 80 columns (swift-argument-parser wraps there when not on a
    /// terminal): a wrapped example would start its next line at the margin.
    @Test func helpExamplesFitEightyColumns() async throws {
        for command in [
            [], ["get"], ["post"], ["batch"], ["cache"], ["download"], ["upload"], ["serve"], ["queue"],
            ["reachability"], ["demo"],
        ] {
            let lines = try await CLI.run(command + ["--help"]).stdout.split(
                separator: "\n",
                omittingEmptySubsequences: false
            )
            for (index, line) in lines.enumerated() where line.hasPrefix("  courier ") && index + 1 < lines.count {
                let next = lines[index + 1]
                #expect(next.isEmpty || next.hasPrefix("  "), "\(command): \(line) | \(next)")
            }
        }
    }

    /// The first hour's rough edges: a busy port, a cache directory that is not there, the progress bar on a
    /// terminal, completions.
    @Test func firstHourEdges() async throws {
        try await withTestServer { server in
            let busy = try await CLI.run(["serve", "--port", String(server.port)])
            #expect(
                busy.status == 1 && busy.stderr.contains("port \(server.port) is in use")
                    && busy.stderr.contains("--port 0"),
                "\(busy.stderr)"
            )
            #expect(!busy.stderr.contains("errno"))

            let directory = try newTemporaryDirectory(prefix: "courier-first-hour")
            let target = directory.appending(path: "body.bin")
            let shown = try await CLI.run(
                ["get", server.url("/drip?size=200000&chunk=20000&interval=30").absoluteString, "-o", target.path()],
                onTerminal: true
            )
            #expect(
                shown.status == 0 && shown.stdout.contains("\r[") && shown.stdout.contains("#"),
                "\(shown.stdout.debugDescription)"
            )
            let quiet = try await CLI.run(
                ["get", server.url("/bytes/200000").absoluteString, "-o", target.path(), "-s"],
                onTerminal: true
            )
            #expect(quiet.status == 0 && quiet.stdout.isEmpty, "\(quiet.stdout.debugDescription)")
        }
        let missing = "/nonexistent/courier-cache-\(UUID().uuidString)"
        for command in [["cache", "stats"], ["cache", "list"], ["cache", "clear"]] {
            let outcome = try await CLI.run(command + ["--cache-dir", missing])
            #expect(
                outcome.status == 1 && outcome.stderr.contains("there is no cache directory at \(missing)"),
                "\(outcome.stderr)"
            )
        }
        #expect(!FileManager.default.fileExists(atPath: missing))
        for shell in ["bash", "zsh", "fish"] {
            let script = try await CLI.run(["--generate-completion-script", shell])
            #expect(
                script.status == 0 && script.stdout.contains("courier") && script.stdout.contains("oauth2-bearer"),
                "\(shell)"
            )
        }
    }

    /// Every unusable value is a usage error: exit 64, naming the option.
    @Test func everyUnusableValueIsAUsageError() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-usage")
        let file = directory.appending(path: "a.txt")
        try Data("a".utf8).write(to: file)
        let cases: [(arguments: [String], names: String)] = [
            (["get", "http://127.0.0.1:1/", "--cache", "bogus"], "--cache"),
            (["get", "http://127.0.0.1:1/", "--retries", "-1"], "--retries"),
            (["get", "http://127.0.0.1:1/", "--timeout", "abc"], "--timeout"),
            (["get", "http://127.0.0.1:1/", "--param", "novalue"], "--param"),
            (["get", "http://127.0.0.1:1/", "-H", "NoColon"], "-H"),
            (["get", "http://127.0.0.1:1/", "--max-filesize", "2X"], "--max-filesize"),
            (
                [
                    "download", "http://127.0.0.1:1/f", "-o", directory.appending(path: "f").path(), "--limit-rate",
                    "2X",
                ], "--limit-rate"
            ),
            (
                ["download", "http://127.0.0.1:1/f", "-o", directory.appending(path: "f").path(), "--sha256", "abc"],
                "--sha256"
            ),
            (["upload", "http://127.0.0.1:1/", "--data", "@" + file.path(), "--compress", "target:abc"], "--compress"),
            (["upload", "http://127.0.0.1:1/", "--file", "doc=/path"], "--file"),
        ]
        for (arguments, option) in cases {
            let outcome = try await CLI.run(arguments)
            #expect(outcome.status == 64, "\(arguments): \(outcome.status) \(outcome.stderr)")
            #expect(outcome.stderr.contains(option), "\(arguments): \(outcome.stderr)")
        }
    }
}
