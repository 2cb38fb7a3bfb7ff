import CourierTesting
import Foundation
import Testing

/// curl on this machine, when there is one (`.ci/run` installs it).
let curlPath: String? = ["/usr/bin/curl", "/usr/local/bin/curl", "/bin/curl"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}

/// What a server received, in the parts two clients given the same command line must agree on.
private struct Received: Equatable, CustomStringConvertible {
    var method: String
    var uri: String
    var body: String
    var fields: [String: String]

    /// The last request `server` saw at `path`, with the headers the command lines below set or imply.
    init?(_ server: TestServer, path: String = "/echo") {
        guard let seen = server.requests(path).last else { return nil }
        method = seen.method
        uri = seen.uri
        body = seen.bodyText
        fields = [:]
        for name in ["content-type", "authorization", "x-trace", "user-agent", "accept"] {
            if let value = seen.header(name) { fields[name] = value }
        }
    }

    var description: String { "\(method) \(uri) \(fields) body \(body.debugDescription)" }

    /// What curl's request becomes once the fields each client fills in by itself are taken from courier's
    /// (`other`): the `User-Agent` unless `line` sets one (`-A`), and the `Accept` unless `--json` sets it (curl
    /// sends `*/*` of its own).
    func withClientDefaults(of other: Received?, for line: [String]) -> Received {
        var expected = self
        if !line.contains("-A") { expected.fields["user-agent"] = other?.fields["user-agent"] }
        if !line.contains("--json") { expected.fields["accept"] = other?.fields["accept"] }
        return expected
    }
}

@Suite("courier speaks curl's and xh's language, checked from the server's side", .timeLimit(.minutes(4)))
struct CLICurlGrammarTests {
    /// Options anywhere on the line, a method from -X or a capitalised first word, and the rule curl and xh share:
    /// a body makes the default method POST.
    @Test func optionsGoAnywhereAndABodyMakesAPost() async throws {
        try await withTestServer { server in
            let url = server.url("/echo").absoluteString
            let cases: [(arguments: [String], method: String)] = [
                (["-s", url], "GET"),
                (["-I", url], "HEAD"),
                ([url, "-d", "a=1"], "POST"),
                (["get", url, "-d", "a=1"], "POST"),
                (["-d", "a=1", url], "POST"),
                (["-X", "PUT", url, "-d", "a=1"], "PUT"),
                ([url, "-sS", "-X", "DELETE"], "DELETE"),
                (["POST", url], "POST"),
                (["-s", "PUT", url], "PUT"),
                (["-v", "DELETE", url, "q==1"], "DELETE"),
                (["-X", "PATCH", "PUT", url], "PATCH"),
                (["PATCH", url, "name=ada"], "PATCH"),
                (["put", url, "-d", "a=1"], "PUT"),
                (["-G", url, "-d", "a=1"], "GET"),
                ([url, "name=ada"], "POST"),
                ([url, "q==swift"], "GET"),
            ]
            for (arguments, method) in cases {
                let outcome = try await CLI.run(arguments)
                #expect(outcome.status == 0, "\(arguments): \(outcome.stderr)")
                #expect(server.requests("/echo").last?.method == method, "\(arguments)")
            }
            let refused = try await CLI.run(["-X", "NOT A METHOD", url])
            #expect(refused.status == 64 && refused.stderr.contains("-X"), "\(refused.stderr)")
            // -s silences the transfer's errors, never a usage error: that is the caller's to fix.
            let silentlyBad = try await CLI.run(["-s", "post", url, "--json", "{name:ada}"])
            #expect(silentlyBad.status == 64 && silentlyBad.stderr.contains("--json"), "\(silentlyBad.stderr)")
            // A curl flag courier gives no meaning is refused with what to write instead, and nothing is sent.
            let seen = server.requests("/echo").count
            for flag in ["-T", "--range=0-9", "-Z", "--limit-rate"] {
                let other = try await CLI.run([url, flag, "x"])
                #expect(other.status == 64 && other.stderr.contains("has no meaning here"), "\(flag): \(other.stderr)")
            }
            #expect(server.requests("/echo").count == seen)
        }
    }

    /// xh's request items: query, header, JSON string and raw JSON fields, fields from files, a file that makes
    /// the body a multipart form, and items that are none of these refused by name.
    @Test func xhRequestItems() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-items")
        let note = directory.appending(path: "note.txt")
        try Data("a note\n".utf8).write(to: note)
        try await withTestServer { server in
            let url = server.url("/echo").absoluteString
            let json = try await CLI.run([
                "POST", url, "name=ada", "age:=42", "tags:=[1,2]", "q==swift", "X-Trace:7", "User-Agent:",
                #"path\:x=a/b"#, "text=@" + note.path(),
            ])
            #expect(json.status == 0, "\(json.stderr)")
            let seen = try #require(server.requests("/echo").last)
            #expect(seen.method == "POST" && seen.uri == "/echo?q=swift")
            #expect(seen.header("x-trace") == "7" && seen.header("user-agent") == nil)
            #expect(seen.header("content-type") == "application/json")
            #expect(seen.header("accept") == "application/json, */*;q=0.5")
            #expect(seen.bodyText == #"{"name":"ada","age":42,"tags":[1,2],"path:x":"a/b","text":"a note\n"}"#)

            let form = try await CLI.run([server.url("/multipart").absoluteString, "doc@" + note.path(), "kind=text"])
            #expect(form.status == 0 && form.stdout.contains("note.txt") && form.stdout.contains("kind"), "\(form)")
            #expect(
                server.requests("/multipart").last?.header("content-type")?.hasPrefix("multipart/form-data") == true
            )

            for (item, says) in [
                ("nothing-here", "is not one of"), ("age:=forty", "not valid JSON"), ("a[b]=1", "nested JSON"),
            ] {
                let bad = try await CLI.run([url, item])
                #expect(bad.status == 64 && bad.stderr.contains(says), "\(item): \(bad.stderr)")
            }
            let mixed = try await CLI.run([url, "doc@" + note.path(), "n:=1"])
            #expect(mixed.status == 64 && mixed.stderr.contains("form"), "\(mixed.stderr)")
            let both = try await CLI.run([url, "a=1", "-d", "b=2"])
            #expect(both.status == 64, "\(both.stderr)")
        }
    }

    /// curl's `-d` family: joined with `&` in the order typed, `-d @FILE` without line breaks, `--data-binary`
    /// byte for byte, `--data-raw` with no `@`, `--data-urlencode`'s forms, and `-G` into the query.
    @Test func theDataFamilyAsCurlJoinsIt() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-data")
        let lines = directory.appending(path: "lines.txt")
        try Data("a=1\r\nb=2\n".utf8).write(to: lines)
        try await withTestServer { server in
            let url = server.url("/echo").absoluteString
            let cases: [(arguments: [String], uri: String, body: String)] = [
                (["-d", "a=1", "--data-raw", "@b", "-d", "c=3"], "/echo", "a=1&@b&c=3"),
                (["-d", "@" + lines.path()], "/echo", "a=1b=2"),
                (["--data-binary", "@" + lines.path()], "/echo", "a=1\r\nb=2\n"),
                (
                    ["--data-urlencode", "q=a b&c", "--data-urlencode", "=x/y", "--data-urlencode", "é"], "/echo",
                    "q=a+b%26c&x%2Fy&%C3%A9"
                ),
                (["--data-urlencode", "file@" + lines.path()], "/echo", "file=a%3D1%0D%0Ab%3D2%0A"),
                (["-G", "-d", "a=1", "--data-urlencode", "q=a b"], "/echo?a=1&q=a+b", ""),
            ]
            for (arguments, uri, body) in cases {
                let outcome = try await CLI.run([url] + arguments)
                let seen = server.requests("/echo").last
                #expect(outcome.status == 0, "\(arguments): \(outcome.stderr)")
                #expect(
                    seen?.uri == uri && seen?.bodyText == body,
                    "\(arguments): \(String(describing: seen?.bodyText))"
                )
            }
            let streamed = try await CLI.run([url, "-d", "@" + lines.path()])
            #expect(streamed.status == 0 && server.requests("/echo").last?.header("content-length") == "6")
        }
    }

    /// curl's `-F`: text fields, files (streamed, with `;type=` and `;filename=`), fields read from a file, a POST
    /// by default; a value that is none of these is refused by name.
    @Test func formPartsAsCurlWritesThem() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-form")
        let note = directory.appending(path: "note.txt")
        try Data("a note".utf8).write(to: note)
        try await withTestServer { server in
            let url = server.url("/multipart").absoluteString
            let form = try await CLI.run([
                "-s", url, "-F", "kind=text", "-F", "doc=@" + note.path() + ";type=text/x-note;filename=n.txt",
                "-F", "inline=<" + note.path(),
            ])
            let seen = server.requests("/multipart").last
            #expect(form.status == 0 && seen?.method == "POST", "\(form.stderr)")
            #expect(seen?.header("content-type")?.hasPrefix("multipart/form-data; boundary=") == true)
            let body = seen?.bodyText ?? ""
            #expect(body.contains("name=\"kind\"\r\n\r\ntext\r\n"), "\(body)")
            #expect(body.contains(#"name="doc"; filename="n.txt""#) && body.contains("Content-Type: text/x-note"))
            #expect(body.contains("name=\"inline\"\r\n\r\na note\r\n"), "\(body)")
            let bad = try await CLI.run([url, "-F", "novalue"])
            #expect(bad.status == 64 && bad.stderr.contains("-F"), "\(bad.stderr)")
            let missing = try await CLI.run([url, "-F", "doc=@" + directory.appending(path: "none").path()])
            #expect(missing.status == 26, "\(missing.stderr)")
        }
    }

    /// The output flags: `-o -`, `-O`, `-D FILE` and `-D -`, `-w` after a failure (`http_code` 000), `-s` that
    /// hides errors and `-S` that shows them again.
    @Test func outputFlagsAsCurlHasThem() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-output")
        try await withTestServer { server in
            let toStdout = try await CLI.run(["-s", server.url("/small").absoluteString, "-o", "-"])
            #expect(toStdout.status == 0 && toStdout.stdout.utf8.count == 1024)
            #expect(!FileManager.default.fileExists(atPath: "-"))

            let named = try await CLI.run(
                [
                    "sh", "-c", "cd \"$0\" && exec \"$1\" -s -O \"$2\"", directory.path(), CLI.executable().path,
                    server.url("/file/500").absoluteString,
                ],
                program: "/usr/bin/env"
            )
            #expect(named.status == 0, "\(named.stderr)")
            #expect(FileManager.default.contents(atPath: directory.appending(path: "500").path())?.count == 500)
            let noName = try await CLI.run(["-O", server.url("/").absoluteString])
            #expect(noName.status == 64 && noName.stderr.contains("-O"), "\(noName.stderr)")
            // The segment as written, as curl keeps it: never a separator, `..`, NUL or line break from the server.
            let inside = directory.appending(path: "a/b")
            try FileManager.default.createDirectory(at: inside, withIntermediateDirectories: true)
            for segment in ["..%2F..%2Fescaped", "%2Ftmp%2Fcourier-O-absolute", "nul%00and%0Aline"] {
                let saved = try await CLI.run(
                    [
                        "sh", "-c", "cd \"$0\" && exec \"$1\" -s -O \"$2\"", inside.path(), CLI.executable().path,
                        server.url("/echo/").absoluteString + segment,
                    ],
                    program: "/usr/bin/env"
                )
                #expect(saved.status == 0, "\(saved.stderr)")
                let file = inside.path(percentEncoded: false) + "/" + segment
                #expect(FileManager.default.fileExists(atPath: file), "\(segment)")
            }
            #expect(!FileManager.default.fileExists(atPath: directory.appending(path: "escaped").path()))
            #expect(!FileManager.default.fileExists(atPath: "/tmp/courier-O-absolute"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: inside.path(percentEncoded: false)).count == 3)

            let headers = directory.appending(path: "headers.txt")
            let dumped = try await CLI.run(["-s", "-D", headers.path(), server.url("/small").absoluteString])
            let text = try String(contentsOf: headers, encoding: .utf8)
            #expect(
                dumped.status == 0 && text.hasPrefix("HTTP/1.1 200 OK\r\n") && text.hasSuffix("\r\n\r\n"),
                "\(text)"
            )
            let dumpedOut = try await CLI.run(["-s", "-D", "-", "-o", "/dev/null", server.url("/small").absoluteString])
            #expect(dumpedOut.stdout.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(dumpedOut.stdout)")

            let refused = try await CLI.run(["http://127.0.0.1:1/x", "-w", "%{http_code} %{url_effective}\n"])
            #expect(refused.status == 7 && refused.stdout == "000 http://127.0.0.1:1/x\n", "\(refused.stdout)")
            let quiet = try await CLI.run(["-s", "http://127.0.0.1:1/x"])
            #expect(quiet.status == 7 && quiet.stderr.isEmpty, "\(quiet.stderr)")
            let shown = try await CLI.run(["-sS", "http://127.0.0.1:1/x"])
            #expect(shown.status == 7 && shown.stderr.hasPrefix("courier: "), "\(shown.stderr)")
        }
    }

    /// curl's cookie files: `-c` writes what curl writes, `-b FILE` reads what curl wrote (and curl reads what
    /// courier wrote), `-b 'a=1'` is a header as written, a missing `-b` file holds no cookies.
    @Test(.enabled(if: curlPath != nil, "curl is not installed"))
    func cookieFilesAsCurlReadsAndWritesThem() async throws {
        let curl = try #require(curlPath)
        let directory = try newTemporaryDirectory(prefix: "courier-cookies")
        let (byCurl, byCourier) = (directory.appending(path: "curl.txt"), directory.appending(path: "courier.txt"))
        try await withTestServer { server in
            let setting = server.url("/set-cookies").absoluteString + "?a=1&b=2"
            _ = try await CLI.run(["-s", "-o", "/dev/null", "-c", byCurl.path(), setting], program: curl)
            let wrote = try await CLI.run(["-s", "-o", "/dev/null", "-c", byCourier.path(), setting])
            #expect(wrote.status == 0, "\(wrote.stderr)")
            let cookieLines = { (file: URL) in
                Set(try String(contentsOf: file, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") })
            }
            #expect(try cookieLines(byCourier) == cookieLines(byCurl))
            #expect(try String(contentsOf: byCourier, encoding: .utf8).hasPrefix("# Netscape HTTP Cookie File\n"))

            let echo = server.url("/echo").absoluteString
            let cookiePairs = { Set((server.requests("/echo").last?.header("cookie") ?? "").split(separator: "; ")) }
            for (program, file) in [(curl, byCourier), ("courier", byCurl)] {
                let sent = try await CLI.run(["-s", "-o", "/dev/null", "-b", file.path(), echo], program: program)
                #expect(sent.status == 0 && cookiePairs() == ["a=1", "b=2"], "\(program) -b \(file.lastPathComponent)")
            }
            for program in [curl, "courier"] {
                _ = try await CLI.run(["-s", "-o", "/dev/null", "-b", "x=1; y=2", echo], program: program)
                #expect(server.requests("/echo").last?.header("cookie") == "x=1; y=2", "\(program)")
                let none = directory.appending(path: "none.txt").path()
                let missing = try await CLI.run(["-s", "-o", "/dev/null", "-b", none, echo], program: program)
                #expect(missing.status == 0 && server.requests("/echo").last?.header("cookie") == nil, "\(program)")
            }

            // -b FILE -c FILE carries cookies from one run to the next, those read and those set.
            let both = directory.appending(path: "both.txt").path()
            _ = try await CLI.run(["-s", "-b", both, "-c", both, server.url("/set-cookies?c=3").absoluteString])
            _ = try await CLI.run(["-s", "-b", both, "-c", both, server.url("/set-cookies?d=4").absoluteString])
            _ = try await CLI.run(["-s", "-b", both, echo])
            #expect(cookiePairs() == ["c=3", "d=4"])

            // The latest expiry a file can say, as curl round-trips it (it trapped in a Double-to-Int64 conversion).
            let far = directory.appending(path: "far.txt")
            let line = "127.0.0.1\tFALSE\t/\tFALSE\t9223372036854775807\tfar\tfuture\n"
            try Data(("# Netscape HTTP Cookie File\n\n" + line).utf8).write(to: far)
            let farOut = directory.appending(path: "far-out.txt").path()
            let roundTrip = try await CLI.run(["-s", "-o", "/dev/null", "-b", far.path(), "-c", farOut, echo])
            #expect(roundTrip.status == 0 && cookiePairs() == ["far=future"], "\(roundTrip.stderr)")
            #expect(try String(contentsOfFile: farOut, encoding: .utf8).contains("\t9223372036854775807\tfar\t"))
        }
    }

    /// curl's `-x`: through a SOCKS5 proxy (which curl and courier both tunnel through; an HTTP proxy curl would
    /// send a plain `http` request to in absolute form, where courier opens a tunnel), the server receives the
    /// same request, and the proxy opens one tunnel for each.
    @Test(.enabled(if: curlPath != nil, "curl is not installed"))
    func proxyAsCurlUsesIt() async throws {
        let curl = try #require(curlPath)
        try await withTestServer { server in
            try await withTestProxy(.socks5(credentials: nil)) { proxy in
                let line = ["-s", "-o", "/dev/null", "-x", "socks5://127.0.0.1:\(proxy.port)", "-d", "a=1"]
                _ = try await CLI.run(line + [server.url("/echo").absoluteString], program: curl)
                let curlSaw = Received(server)
                let outcome = try await CLI.run(line + [server.url("/echo").absoluteString])
                let received = Received(server)
                let expected = curlSaw?.withClientDefaults(of: received, for: line)
                #expect(outcome.status == 0 && received == expected, "\(outcome.stderr)")
                #expect(proxy.tunnels.count == 2, "\(proxy.tunnels)")
            }
        }
    }

    /// curl's `--cacert` and `-k` against the HTTPS loopback server: the server receives the same request from
    /// both, and an untrusted certificate with neither fails both before anything is sent.
    @Test(.enabled(if: curlPath != nil, "curl is not installed"))
    func tlsFlagsAsCurlUsesThem() async throws {
        let curl = try #require(curlPath)
        let authority = try TestCertificateAuthority()
        let directory = try newTemporaryDirectory(prefix: "courier-tls-curl")
        let caFile = directory.appending(path: "ca.pem").path(percentEncoded: false)
        try Data(authority.certificatePEM.utf8).write(to: URL(filePath: caFile))
        try await withTestServer(tls: .init(identity: try authority.issue())) { server in
            let url = server.url("/echo").absoluteString
            for flags in [["--cacert", caFile], ["-k"]] {
                let line = ["-s", "-o", "/dev/null", "-d", "a=1"] + flags + [url]
                let byCurl = try await CLI.run(line, program: curl)
                let curlSaw = Received(server)
                let byCourier = try await CLI.run(line)
                let received = Received(server)
                let expected = curlSaw?.withClientDefaults(of: received, for: line)
                #expect(byCurl.status == 0 && byCourier.status == 0 && received == expected, "\(flags)")
            }
            let seen = server.requests("/echo").count
            let byCurl = try await CLI.run(["-s", url], program: curl)
            let byCourier = try await CLI.run(["-s", url])
            #expect(byCurl.status == 60 && byCourier.status == 60, "curl \(byCurl.status), courier \(byCourier.status)")
            #expect(server.requests("/echo").count == seen)
        }
    }

    /// curl's `-C -`: the rest of a partial `-o` file appended (206), a whole one left alone (416, exit 0), a
    /// server that sends the whole body refused with 33 and the file unchanged, a missing file fetched whole; the
    /// same through curl, byte for byte and code for code.
    @Test func continueAtGoesOnFromTheFile() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-continue")
        try await withTestServer { server in
            let wholeFile = directory.appending(path: "whole.bin")
            _ = try await CLI.run(["-s", "-o", wholeFile.path(), server.url("/file/100000").absoluteString])
            let whole = try Data(contentsOf: wholeFile)
            var programs = ["courier"]
            if let curlPath { programs.append(curlPath) }
            for program in programs {
                let file = directory.appending(path: "part-\(programs.firstIndex(of: program) ?? 0).bin")
                try whole.prefix(40_000).write(to: file)
                let resumed = try await CLI.run(
                    ["-s", "-C", "-", "-o", file.path(), server.url("/file/100000").absoluteString],
                    program: program
                )
                #expect(resumed.status == 0 && FileManager.default.contents(atPath: file.path()) == whole, "\(program)")
                #expect(server.requests("/file/100000").last?.header("range") == "bytes=40000-", "\(program)")
                let again = try await CLI.run(
                    ["-s", "-C", "-", "-o", file.path(), server.url("/file/100000").absoluteString],
                    program: program
                )
                #expect(again.status == 0 && FileManager.default.contents(atPath: file.path()) == whole, "\(program)")

                try whole.prefix(400).write(to: file)
                let refused = try await CLI.run(
                    ["-s", "-C", "-", "-o", file.path(), server.url("/small").absoluteString],
                    program: program
                )
                #expect(refused.status == 33, "\(program): \(refused.stderr)")
                #expect(FileManager.default.contents(atPath: file.path()) == whole.prefix(400), "\(program)")

                try FileManager.default.removeItem(at: file)
                let fresh = try await CLI.run(
                    ["-s", "-C", "-", "-o", file.path(), server.url("/file/100000").absoluteString],
                    program: program
                )
                #expect(fresh.status == 0 && FileManager.default.contents(atPath: file.path()) == whole, "\(program)")
            }
            let offset = try await CLI.run(["-C", "100", "-o", "x", server.url("/small").absoluteString])
            #expect(offset.status == 64 && offset.stderr.contains("-C takes -"), "\(offset.stderr)")
        }
    }

    /// curl's `--resolve HOST:PORT:ADDR`: the connection goes to the address, the request keeps the name (its
    /// `Host` as curl sends it); the forms courier does not take are refused by name.
    @Test func resolveSendsANameToAnAddress() async throws {
        try await withTestServer { server in
            let url = "http://courier.invalid:\(server.port)/echo"
            let entry = "courier.invalid:\(server.port):127.0.0.1"
            var programs = ["courier"]
            if let curlPath { programs.append(curlPath) }
            for program in programs {
                let outcome = try await CLI.run(["-s", "-o", "/dev/null", "--resolve", entry, url], program: program)
                let seen = server.requests("/echo").last
                #expect(outcome.status == 0, "\(program): \(outcome.stderr)")
                #expect(seen?.header("host") == "courier.invalid:\(server.port)", "\(program)")
            }
            for (bad, says) in [
                ("courier.invalid:80", "HOST:PORT:ADDR"), ("courier.invalid:0:127.0.0.1", "port"),
                ("*:80:127.0.0.1", "does not take"), ("courier.invalid:80:localhost", "numeric"),
                ("courier.invalid:80:127.0.0.1,127.0.0.2", "several"),
            ] {
                let refused = try await CLI.run(["--resolve", bad, url])
                #expect(refused.status == 64 && refused.stderr.contains(says), "\(bad): \(refused.stderr)")
            }
        }
    }

    /// `/multipart`'s summary without the form's byte counts, which differ by the boundaries' lengths.
    private static func withoutByteCounts(_ text: String) -> String {
        text.replacing(/"(decodedBytes|receivedBytes)":[0-9]+,?/, with: "")
    }

    /// The same command line through curl and through courier: the server receives the same method, target,
    /// body and headers, and both exit with the same code (and print the same `-w` text).
    @Test(.enabled(if: curlPath != nil, "curl is not installed"))
    func curlAndCourierSendTheSame() async throws {
        let curl = try #require(curlPath)
        let directory = try newTemporaryDirectory(prefix: "courier-vs-curl")
        let lines = directory.appending(path: "lines.txt")
        try Data("a=1\r\nb=2\n".utf8).write(to: lines)
        try await withTestServer { server in
            let url = server.url("/echo").absoluteString
            let commandLines: [[String]] = [
                ["-d", "a=1", url],
                [url, "-d", "a=1", "-d", "b=2"],
                ["-X", "PUT", url, "-d", "x"],
                ["-X", "DELETE", url],
                ["-I", url],
                ["-G", url + "?x=1", "-d", "a=1", "--data-urlencode", "q=hello world"],
                ["-d", "@" + lines.path(), url],
                ["--data-binary", "@" + lines.path(), url],
                ["--data-raw", "@x", url],
                ["--data-urlencode", "name@" + lines.path(), url],
                ["--data-urlencode", "=a b", "--data-urlencode", "a b", url],
                ["-d", "a=1", "-H", "Content-Type: text/plain", url],
                ["-H", "X-Trace: 7", "-A", "agent/1", url],
                ["-u", "ada:s3cret", url],
                ["--json", #"{"a":1}"#, url],
                ["-sS", "-L", "--max-redirs", "3", "-m", "10", "-o", "/dev/null", url],
            ]
            for line in commandLines {
                let byCurl = try await CLI.run(["-s", "-o", "/dev/null"] + line, program: curl)
                let curlSaw = Received(server)
                let byCourier = try await CLI.run(["-s", "-o", "/dev/null"] + line)
                let courierSaw = Received(server)
                #expect(byCurl.status == 0 && byCourier.status == 0, "\(line): \(byCurl.stderr) \(byCourier.stderr)")
                let expected = curlSaw?.withClientDefaults(of: courierSaw, for: line)
                #expect(courierSaw == expected, "\(line)\n  curl:    \(String(describing: curlSaw))")
            }

            let outcomes: [[String]] = [
                ["-s", server.url("/status/404").absoluteString, "-w", "%{http_code}"],
                ["-sf", server.url("/status/404").absoluteString, "-w", "%{http_code}"],
                ["-s", "http://127.0.0.1:1/x", "-w", "%{http_code}"],
                ["-s", "-m", "0.3", server.url("/delay/3000").absoluteString, "-w", "%{http_code}"],
                ["-s", server.url("/small").absoluteString, "-o", "-"],
                // A form's boundary is random: the server's reading of its parts is compared instead.
                ["-s", server.url("/multipart").absoluteString, "-F", "kind=text", "-F", "doc=@" + lines.path()],
                ["-s", server.url("/multipart").absoluteString, "-F", "doc=@" + lines.path() + ";type=text/x-a"],
            ]
            for line in outcomes {
                let byCurl = try await CLI.run(line, program: curl)
                let byCourier = try await CLI.run(line)
                #expect(
                    byCourier.status == byCurl.status,
                    "\(line): curl \(byCurl.status), courier \(byCourier.status)"
                )
                #expect(
                    Self.withoutByteCounts(byCourier.stdout) == Self.withoutByteCounts(byCurl.stdout),
                    "\(line): curl \(byCurl.stdout.debugDescription)"
                )
            }
        }
    }
}
