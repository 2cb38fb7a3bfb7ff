import CourierTesting
import Foundation
import Testing

/// Each command that sends requests takes the same connection options (one option group), and each option is
/// checked from the server's side: what arrived, where it came through, what was refused. `queue work` takes the
/// same group; `QueueWorkOptionsTests` checks it there (it needs PostgreSQL).
@Suite("One set of connection options on every command", .timeLimit(.minutes(6)))
struct CLIConnectionOptionsTests {
    enum Command: String, CaseIterable, Sendable { case get, batch, download, upload }

    /// Runs `command` against `url` with `options`, the rest of its command line made up here.
    private func run(_ command: Command, _ url: URL, _ options: [String], in directory: URL) async throws -> CLI.Outcome
    {
        let name = UUID().uuidString
        let arguments: [String]
        switch command {
        case .get: arguments = ["get", url.absoluteString, "-s"]
        case .batch:
            let list = directory.appending(path: "\(name).txt")
            try Data("GET \(url.absoluteString)\n".utf8).write(to: list)
            arguments = ["batch", list.path()]
        case .download: arguments = ["download", url.absoluteString, "-o", directory.appending(path: name).path()]
        case .upload:
            let payload = directory.appending(path: "\(name).bin")
            try Data(repeating: 7, count: 1000).write(to: payload)
            arguments = ["upload", url.absoluteString, "--data", "@" + payload.path(), "--method", "PUT"]
        }
        return try await CLI.run(arguments + options)
    }

    /// Waits (a little) until `condition` holds: the server hears a client leave only when it next looks.
    private func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<60 where !condition() { try? await Task.sleep(for: .milliseconds(50)) }
        return condition()
    }

    @Test(arguments: Command.allCases)
    func plainOptionsTakeEffect(_ command: Command) async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-options-\(command)")
        try await withTestServer { server in
            let echo = server.url("/echo")
            var last: SeenRequest? { server.requests("/echo").last }

            var outcome = try await run(command, echo, ["-H", "X-Matrix: on"], in: directory)
            #expect(outcome.status == 0 && last?.header("x-matrix") == "on", "-H: \(outcome.stderr)")
            outcome = try await run(command, echo, ["-u", "ada:s3cret"], in: directory)
            #expect(last?.header("authorization") == "Basic YWRhOnMzY3JldA==", "-u: \(outcome.stderr)")
            outcome = try await run(command, echo, ["--oauth2-bearer", "tok-9"], in: directory)
            #expect(last?.header("authorization") == "Bearer tok-9", "--oauth2-bearer: \(outcome.stderr)")
            outcome = try await run(command, echo, ["-A", "matrix/1"], in: directory)
            #expect(last?.header("user-agent") == "matrix/1", "-A: \(outcome.stderr)")
            outcome = try await run(command, echo, ["--connect-timeout", "5"], in: directory)
            #expect(outcome.status == 0 && last != nil, "--connect-timeout: \(outcome.stderr)")

            let jar = directory.appending(path: "cookies.txt").path()
            _ = try await CLI.run([
                "get", server.url("/set-cookies?matrix=\(command)").absoluteString, "--cookie-jar", jar,
            ])
            outcome = try await run(command, echo, ["-b", jar], in: directory)
            #expect(last?.header("cookie") == "matrix=\(command)", "-b after -c: \(outcome.stderr)")
            outcome = try await run(command, echo, ["-b", "a=1; b=2"], in: directory)
            #expect(last?.header("cookie") == "a=1; b=2", "-b with data: \(outcome.stderr)")

            try await withTestProxy(.http(credentials: nil)) { proxy in
                // curl's -x on the request command, the long name on the others: one option under two names.
                let flag = command == .get ? "-x" : "--proxy"
                outcome = try await run(command, echo, [flag, "http://127.0.0.1:\(proxy.port)"], in: directory)
                #expect(
                    outcome.status == 0 && proxy.tunnels.contains("127.0.0.1:\(server.port)"),
                    "--proxy: \(outcome.stderr)"
                )
            }

            for option in ["--timeout", "--read-timeout"] {
                let aborts = server.aborts("/delay/4000")
                outcome = try await run(
                    command,
                    server.url("/delay/4000"),
                    [option, "0.4", "--retries", "0"],
                    in: directory
                )
                #expect(outcome.status != 0, "\(option)")
                #expect(
                    await eventually { server.aborts("/delay/4000") > aborts },
                    "\(option): the server saw no client leave"
                )
            }

            outcome = try await run(
                command,
                server.url("/flaky/\(command)?failures=1"),
                ["--retries", "1"],
                in: directory
            )
            #expect(outcome.status == 0 && server.hits("/flaky/\(command)") == 2, "--retries: \(outcome.stderr)")

            outcome = try await run(command, server.url("/redirect/3"), ["--max-redirs", "1"], in: directory)
            #expect(
                outcome.status != 0 && server.hits("/redirect/2") == 1 && server.hits("/redirect/1") == 0,
                "--max-redirs: \(outcome.stderr)"
            )
            outcome = try await run(command, server.url("/redirect/1"), ["-L"], in: directory)
            #expect(outcome.status == 0 && server.hits("/redirect/0") == 1, "-L: \(outcome.stderr)")
        }
    }

    @Test(arguments: Command.allCases)
    func tlsAndVersionOptionsTakeEffect(_ command: Command) async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-tls-options-\(command)")
        let authority = try TestCertificateAuthority()
        let caFile = directory.appending(path: "ca.pem")
        try Data(authority.certificatePEM.utf8).write(to: caFile)
        let leaf = try authority.issue()
        try await withTestServer(tls: .init(identity: leaf)) { server in
            let echo = server.url("/echo")
            var outcome = try await run(command, echo, ["--cacert", caFile.path()], in: directory)
            #expect(outcome.status == 0 && server.hits("/echo") == 1, "--cacert: \(outcome.stderr)")
            outcome = try await run(
                command,
                echo,
                ["--cacert", caFile.path(), "--pin", "sha256/" + leaf.publicKeyPin],
                in: directory
            )
            #expect(outcome.status == 0 && server.hits("/echo") == 2, "--pin: \(outcome.stderr)")
            outcome = try await run(
                command,
                echo,
                ["--cacert", caFile.path(), "--pin", "sha256/" + (try authority.issue()).publicKeyPin],
                in: directory
            )
            #expect(outcome.status != 0 && server.hits("/echo") == 2, "a wrong --pin reached the server")
            outcome = try await run(command, echo, ["--insecure"], in: directory)
            #expect(outcome.status == 0 && server.hits("/echo") == 3, "--insecure: \(outcome.stderr)")
        }

        let clients = try TestCertificateAuthority(name: "Courier Client CA")
        let client = try clients.issue(hosts: ["courier-client"], forClient: true).write(to: directory, name: "client")
        try await withTestServer(tls: .init(identity: leaf, clientCertificateAuthorityPEM: clients.certificatePEM)) {
            server in
            let echo = server.url("/echo")
            var outcome = try await run(command, echo, ["--cacert", caFile.path()], in: directory)
            #expect(outcome.status != 0 && server.hits("/echo") == 0, "no client certificate, yet the server answered")
            outcome = try await run(
                command,
                echo,
                ["--cacert", caFile.path(), "--cert", client.certificate, "--key", client.privateKey],
                in: directory
            )
            #expect(outcome.status == 0 && server.hits("/echo") == 1, "--cert/--key: \(outcome.stderr)")
        }

        try await withTestServer(tls: .init(identity: leaf, http2: true)) { server in
            let echo = server.url("/echo")
            var outcome = try await run(command, echo, ["--cacert", caFile.path(), "--http2"], in: directory)
            #expect(
                outcome.status == 0 && server.requests("/echo").last?.version == "HTTP/2",
                "--http2: \(outcome.stderr)"
            )
            outcome = try await run(command, echo, ["--cacert", caFile.path(), "--http1.1"], in: directory)
            #expect(
                outcome.status == 0 && server.requests("/echo").last?.version == "HTTP/1.1",
                "--http1.1: \(outcome.stderr)"
            )
        }
    }
}
