import ArgumentParser
import CourierTestSupport
import Testing

@testable import courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite("The request commands' own reader agrees with swift-argument-parser")
struct RequestCommandLineTests {
    /// Lines that use every option of the request commands, in each of their spellings, as the CLI's tests and
    /// users write them.
    private static let lines: [[String]] = [
        ["127.0.0.1:8080/echo"],
        ["127.0.0.1:8080/echo", "--param", "q=1", "--param=r=2", "-H", "X-Trace: 7", "--header", "Accept: */*"],
        ["-X", "PUT", "127.0.0.1:8080/echo", "--request", "PATCH", "-d", "a=1", "--data=b=2"],
        [
            "127.0.0.1:8080/echo", "--data-binary", "@body.bin", "-d", "x", "--data-raw", "@y", "--data-urlencode",
            "z=1 2",
        ],
        ["127.0.0.1:8080/echo", "-G", "-d", "a=1", "--get"],
        ["POST", "127.0.0.1:8080/echo", "name=ada", "age:=42", "q==swift", "X-Trace:7"],
        ["-v", "POST", "127.0.0.1:8080/echo", "name=ada"],
        ["127.0.0.1:8080/echo", "--json", #"{"a":1}"#],
        ["127.0.0.1:8080/echo", "-F", "a=1", "--form", "f=@file.txt;type=text/plain"],
        ["127.0.0.1:8080/big", "-o", "big.bin", "-C", "-", "-D", "-", "-i", "-s", "-S", "-f", "-w", "%{http_code}\\n"],
        ["127.0.0.1:8080/big", "--output", "-", "--dump-header", "h.txt", "--include", "--silent", "--show-error"],
        ["127.0.0.1:8080/big/file.bin", "-O", "--continue-at", "-", "--fail", "--write-out=%{size_download}"],
        ["127.0.0.1:8080/big/file.bin", "--remote-name", "--check-status", "--pretty", "format", "--max-filesize=10M"],
        ["-sSfL", "127.0.0.1:8080/echo", "-I", "--head", "-v", "--verbose"],
        ["127.0.0.1:8080/small", "--cache", "cache-else-network", "--ttl", "300", "--cache-dir", "/tmp/c"],
        ["127.0.0.1:8080/small", "--cache=http", "--cache-store", "postgres://u:p@127.0.0.1:5432/db"],
        [
            "https://localhost:8443/echo", "--cacert", "ca.pem", "--cert", "c.pem", "--key", "k.pem", "--pin",
            "sha256/x",
        ],
        ["https://localhost:8443/echo", "-k", "--insecure", "--http2", "--pin=sha256/y", "--pin", "sha256/z"],
        ["127.0.0.1:8080/echo", "--http1.1", "-u", "ada:secret", "-A", "tool/1", "--user-agent", "tool/2"],
        ["127.0.0.1:8080/echo", "--user=ada:pw", "-x", "socks5://127.0.0.1:1080", "--proxy", "http://p:3128"],
        ["127.0.0.1:8080/echo", "--oauth2-bearer", "TOKEN", "-b", "a=1; b=2", "-c", "jar.txt"],
        ["127.0.0.1:8080/echo", "--cookie", "cookies.txt", "--cookie-jar=jar.txt", "--resolve", "a.test:80:127.0.0.1"],
        ["127.0.0.1:8080/echo", "--har", "run.har", "-w", "%{num_connects} %{time_connect}"],
        ["127.0.0.1:8080/echo", "-m", "5", "--max-time", "6", "--timeout", "7", "--read-timeout", "8"],
        ["127.0.0.1:8080/echo", "--connect-timeout", "2", "--retries", "3", "--max-redirs", "0", "-L"],
        ["127.0.0.1:8080/echo", "--location", "--compressed", "--retries=4", "--max-redirs=12", "-d", "-"],
        ["127.0.0.1:8080/echo", "-X", "GET", "-X", "DELETE", "-s", "-s", "-kL"],
        ["127.0.0.1:8080/echo", "-sSX", "PUT", "-sd", "a=1", "-kLo", "-"],
    ]

    @Test func everyLineReadsAsSwiftArgumentParserReadsIt() throws {
        for line in Self.lines {
            let own = try #require(RequestCommandLine.options(line), "\(line)")
            let parsed = try Get.parse(line).options.settings
            #expect(String(describing: own) == String(describing: parsed), "\(line)")
            #expect(
                own.body.dataParts.map { "\($0.kind) \($0.text)" }
                    == parsed.body.dataParts.map { "\($0.kind) \($0.text)" },
                "\(line)"
            )
        }
    }

    /// Random lines from the words users type (every option name, values, URLs, items, stray dashes): whenever the
    /// reader takes a line, swift-argument-parser takes it too and reads the same settings.
    @Test func randomLinesTheReaderTakesReadTheSameInSwiftArgumentParser() throws {
        let names = RequestCommandLine.names.sorted()
        let values = [
            "-", "a=1", "@body.bin", "GET", "PUT", "5", "0", "-1", "x", "cache-else-network", "http", "format", "10M",
            "%{http_code}", "sha256/x", "ada:pw", "Accept: */*",
        ]
        let words = [
            "127.0.0.1:8080/echo", "POST", "name=ada", "age:=42", "q==swift", "X-Trace:7", "--", "-sS", "-kL",
            "-sSX", "-XPUT", "--nope", "-Z", "--data=", "--=x", "",
        ]
        var generator = SeededGenerator(seed: 57)
        var taken = 0
        for _ in 0..<1000 {
            let line = (0..<Int.random(in: 1...7, using: &generator)).map { _ -> String in
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: names.randomElement(using: &generator) ?? ""
                case 1: values.randomElement(using: &generator) ?? ""
                default: words.randomElement(using: &generator) ?? ""
                }
            }
            guard let own = RequestCommandLine.options(line) else { continue }
            taken += 1
            let parsed = try #require(try? Get.parse(line).options.settings, "\(line)")
            #expect(String(describing: own) == String(describing: parsed), "\(line)")
            #expect(
                own.body.dataParts.map { "\($0.kind) \($0.text)" }
                    == parsed.body.dataParts.map { "\($0.kind) \($0.text)" },
                "\(line)"
            )
        }
        #expect(taken > 100, "too few lines taken to say anything: \(taken)")
    }

    @Test func theLinesUseEveryNameOfEveryOption() {
        let used = Set(Self.lines.joined().map { $0.split(separator: "=", maxSplits: 1)[0] }.map(String.init))
            .union(
                Self.lines.joined().filter { $0.count > 2 && !$0.hasPrefix("--") && $0.hasPrefix("-") }
                    .flatMap { $0.dropFirst().map { "-\($0)" } }
            )
        #expect(RequestCommandLine.names.subtracting(used).sorted() == [])
    }

    @Test func theReaderKnowsEveryNameSwiftArgumentParserKnows() throws {
        struct Help: Decodable {
            struct Command: Decodable { var arguments: [Argument] }
            struct Argument: Decodable { var names: [Name]? }
            struct Name: Decodable { var kind: String, name: String }
            var command: Command
        }
        let help = try JSONDecoder().decode(Help.self, from: Data(Get._dumpHelp().utf8))
        let names = help.command.arguments.flatMap { $0.names ?? [] }
            .map { ($0.kind == "short" ? "-" : "--") + $0.name }
        #expect(Set(names).subtracting(["-h", "--help"]) == RequestCommandLine.names)
    }

    @Test func aLineItDoesNotUnderstandGoesToSwiftArgumentParser() {
        let lines: [[String]] = [
            [],
            ["--help"],
            ["127.0.0.1:8080/echo", "-h"],
            ["127.0.0.1:8080/echo", "--nope"],
            ["127.0.0.1:8080/echo", "-Z"],
            ["127.0.0.1:8080/echo", "-sZ"],
            ["127.0.0.1:8080/echo", "-XPUT"],
            ["127.0.0.1:8080/echo", "-X=PUT"],
            ["127.0.0.1:8080/echo", "-X"],
            ["127.0.0.1:8080/echo", "-H", "-x"],
            ["127.0.0.1:8080/echo", "--silent=yes"],
            ["127.0.0.1:8080/echo", "--data="],
            ["127.0.0.1:8080/echo", "--retries", "many"],
            ["127.0.0.1:8080/echo", "--retries", "-1"],
            ["127.0.0.1:8080/echo", "--retries", "99"],
            ["127.0.0.1:8080/echo", "--", "-d"],
            ["127.0.0.1:8080/echo", "-X", "NOT A METHOD"],
            ["127.0.0.1:8080/echo", "-o", "a", "-O"],
            ["127.0.0.1:8080/echo", "--pretty", "loud"],
            ["127.0.0.1:8080/echo", "--json", "{}", "-d", "a"],
            ["-s"],
        ]
        for line in lines {
            #expect(RequestCommandLine.options(line) == nil, "\(line)")
        }
    }

    @Test func theCommandNamesAreTheSubcommands() {
        #expect(CourierCLI.commandNames == CourierCLI.configuration.subcommands.map { $0._commandName })
    }
}
