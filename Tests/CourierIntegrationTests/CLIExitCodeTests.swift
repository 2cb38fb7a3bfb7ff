import CourierTesting
import Foundation
import Testing

@Suite("courier's exit codes, one by one, and where they are listed", .timeLimit(.minutes(3)))
struct CLIExitCodeTests {
    /// Each failure class ends with its number (curl's where curl has one), from a real failure.
    @Test func eachFailureEndsWithItsNumber() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-exit")
        try await withTestServer { server in
            let url = { (path: String) in server.url(path).absoluteString }
            let cases: [(arguments: [String], status: Int32)] = [
                (["get", url("/small")], 0),
                (["get", url("/fault/reset")], 1),
                (["get", url("/status/404")], 0),
                (["get", url("/status/404"), "-f"], 22),
                (["--check-status", url("/redirect/1"), "--max-redirs", "0"], 3),
                (["--check-status", url("/status/404")], 4),
                (["--check-status", url("/status/503")], 5),
                (["download", url("/status/404"), "-o", directory.appending(path: "never").path()], 22),
                (["get", "http://courier..invalid/x"], 6),
                (["get", "http://127.0.0.1:1/x"], 7),
                (["post", url("/echo"), "-d", "@" + directory.appending(path: "missing").path()], 26),
                // A body whose reads fail is an input failure (it said 23, a write error, before).
                (["post", url("/echo"), "-d", "@/proc/self/mem"], 26),
                (["get", url("/delay/5000"), "--timeout", "0.3"], 28),
                (["get", url("/delay/5000"), "-m", "0.3"], 28),
                (["get", url("/redirect-loop")], 47),
                (["get", url("/redirect/3"), "--max-redirs", "1"], 47),
                (["get", url("/fault/bad-gzip")], 61),
                (["get", url("/bytes/100"), "--max-filesize", "10"], 63),
                (["get", url("/bytes/100000?chunked=1"), "--max-filesize", "1K"], 63),
                (["get", url("/small"), "--timeout", "abc"], 64),
            ]
            for (arguments, status) in cases {
                let outcome = try await CLI.run(arguments)
                #expect(outcome.status == status, "\(arguments): \(outcome.status) \(outcome.stderr)")
                if status != 0 {
                    #expect(
                        outcome.stderr.hasPrefix("courier: ") || outcome.stderr.hasPrefix("HTTP "),
                        "\(outcome.stderr)"
                    )
                }
            }

            // A file that says it has no bytes (as /proc's do) is read as a stream, as curl reads it.
            let proc = try await CLI.run(["post", url("/echo"), "-d", "@/proc/version"])
            #expect(proc.status == 0 && proc.stdout.contains(#""body":"Linux version"#), "\(proc.stdout)")

            // 23: the output cannot be written (a file size limit, as a full disk would refuse it); no file is left.
            let target = directory.appending(path: "big.bin")
            let full = try await CLI.run(["get", url("/bytes/2000000"), "-o", target.path()], fileSizeLimitKiB: 64)
            #expect(full.status == 23, "\(full.stderr)")
            #expect(!FileManager.default.fileExists(atPath: target.path()))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path()).isEmpty)

            // 130: interrupted; what -o was writing is removed, the final name never appears.
            let slow = try await CLI.run(
                ["get", url("/drip?size=100000&chunk=100&interval=20"), "-o", target.path()],
                killWhen: { server.hits("/drip") > 0 },
                signal: SIGINT
            )
            #expect(slow.status == 130, "\(slow.stderr)")
            #expect(slow.stderr.contains("interrupted"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path()).isEmpty)
        }
        // 35: the certificate is not trusted.
        try await withTestServer(tls: .init(identity: try TestCertificateAuthority().issue())) { server in
            let untrusted = try await CLI.run(["get", server.url("/echo").absoluteString])
            #expect(untrusted.status == 60, "\(untrusted.stderr)")
        }
    }

    /// The table is the same in `courier --help` and the README: every code with its meaning.
    @Test func theTableIsInTheHelpAndTheReadme() async throws {
        let help = try await CLI.run(["--help"])
        let readme = try String(
            contentsOf: URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../README.md"),
            encoding: .utf8
        )
        let table = help.stdout.components(separatedBy: "Exit codes").last ?? ""
        var rows: [Int: String] = [:]
        for line in table.split(separator: "\n") {
            let words = line.split(separator: " ", maxSplits: 1)
            if line.hasPrefix("  "), words.count == 2, let code = Int(words[0]) {
                rows[code] = words[1].trimmingCharacters(in: .whitespaces)
            }
        }
        #expect(
            rows.keys.sorted() == [0, 1, 3, 4, 5, 6, 7, 22, 23, 26, 28, 33, 35, 47, 56, 60, 61, 63, 64, 97, 130],
            "\(table)"
        )
        for (code, meaning) in rows {
            #expect(readme.contains("\n| \(code) | \(meaning) |"), "the README lacks | \(code) | \(meaning) |")
        }
    }
}
