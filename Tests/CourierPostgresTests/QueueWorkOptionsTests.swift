import CourierTestSupport
import CourierTesting
import Foundation
import Testing

/// `courier queue work` takes the connection options every request command takes (the rest run in
/// `CLIConnectionOptionsTests`), each checked from the server's side. `--timeout` does not apply to a worker.
@Suite(
    "courier queue work takes the connection options",
    .enabled(if: TestDatabase.isAvailable && FleetCLI.isBuiltIn),
    .timeLimit(.minutes(4))
)
struct QueueWorkOptionsTests {
    /// Queues one job for `url` (one attempt) and works the queue until it is done with `options`.
    private func work(
        _ url: URL,
        _ options: [String],
        database: String,
        in directory: URL
    ) async throws -> FleetCLI.Outcome {
        let destination = directory.appending(path: UUID().uuidString).path()
        let added = try await FleetCLI.run([
            "queue", "add", "--db", database, "-d", directory.path(), "--attempts", "1", url.absoluteString,
        ])
        #expect(added.status == 0, "\(added.stderr)")
        let id = Int(added.stdout.split(separator: " ").first ?? "") ?? 0
        _ = try await TestDatabase.withConnection(database) { connection in
            try await TestDatabase.execute(
                "UPDATE courier_download_jobs SET destination = '\(destination)' WHERE id = \(id)",
                on: connection
            )
        }
        return try await FleetCLI.run(["queue", "work", "--db", database, "--until-done"] + options)
    }

    @Test func plainOptionsTakeEffect() async throws {
        try await TestDatabase.withFresh { database in
            try await withTestServer { server in
                let directory = try temporaryDirectory()
                defer { try? FileManager.default.removeItem(at: directory) }
                let echo = server.url("/echo")
                var last: SeenRequest? { server.requests("/echo").last }
                var outcome = try await work(echo, ["-H", "X-Matrix: on"], database: database, in: directory)
                #expect(outcome.status == 0 && last?.header("x-matrix") == "on", "-H: \(outcome.stderr)")
                outcome = try await work(echo, ["-u", "ada:s3cret"], database: database, in: directory)
                #expect(last?.header("authorization") == "Basic YWRhOnMzY3JldA==", "-u: \(outcome.stderr)")
                outcome = try await work(echo, ["--oauth2-bearer", "tok-9"], database: database, in: directory)
                #expect(last?.header("authorization") == "Bearer tok-9", "--oauth2-bearer: \(outcome.stderr)")
                outcome = try await work(echo, ["-A", "matrix/1"], database: database, in: directory)
                #expect(last?.header("user-agent") == "matrix/1", "-A: \(outcome.stderr)")
                outcome = try await work(
                    echo,
                    ["--connect-timeout", "5", "--http1.1"],
                    database: database,
                    in: directory
                )
                #expect(outcome.status == 0 && last?.version == "HTTP/1.1", "--connect-timeout: \(outcome.stderr)")

                let jar = directory.appending(path: "cookies.txt").path()
                _ = try await FleetCLI.run([
                    "get", server.url("/set-cookies?matrix=queue").absoluteString, "--cookie-jar", jar,
                ])
                outcome = try await work(echo, ["-b", jar], database: database, in: directory)
                #expect(last?.header("cookie") == "matrix=queue", "-b after -c: \(outcome.stderr)")

                try await withTestProxy(.http(credentials: nil)) { proxy in
                    outcome = try await work(
                        echo,
                        ["--proxy", "http://127.0.0.1:\(proxy.port)"],
                        database: database,
                        in: directory
                    )
                    #expect(
                        outcome.status == 0 && proxy.tunnels.contains("127.0.0.1:\(server.port)"),
                        "--proxy: \(outcome.stderr)"
                    )
                }

                let aborts = server.aborts("/delay/4000")
                outcome = try await work(
                    server.url("/delay/4000"),
                    ["--read-timeout", "0.4", "--retries", "0"],
                    database: database,
                    in: directory
                )
                #expect(outcome.status != 0)
                for _ in 0..<60 where server.aborts("/delay/4000") == aborts {
                    try await Task.sleep(for: .milliseconds(50))
                }
                #expect(server.aborts("/delay/4000") > aborts, "--read-timeout: the server saw no client leave")

                outcome = try await work(
                    server.url("/flaky/queue?failures=1"),
                    ["--retries", "1"],
                    database: database,
                    in: directory
                )
                // The queue holds the failed jobs of the steps above, so `--until-done` exits 1; the job itself is done.
                #expect(
                    outcome.stderr.contains("done ") && server.hits("/flaky/queue") == 2,
                    "--retries: \(outcome.stderr)"
                )
                outcome = try await work(
                    server.url("/redirect/3"),
                    ["--max-redirs", "1"],
                    database: database,
                    in: directory
                )
                #expect(
                    outcome.stderr.contains("failed ") && server.hits("/redirect/2") == 1
                        && server.hits("/redirect/1") == 0,
                    "--max-redirs"
                )
                outcome = try await work(server.url("/redirect/1"), ["-L"], database: database, in: directory)
                #expect(outcome.stderr.contains("done ") && server.hits("/redirect/0") == 1, "-L: \(outcome.stderr)")

                let refused = try await FleetCLI.run(["queue", "work", "--db", database, "--timeout", "5"])
                #expect(refused.status == 64 && refused.stderr.contains("--timeout does not apply to queue work"))
            }
        }
    }

    @Test func tlsOptionsTakeEffect() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let authority = try TestCertificateAuthority()
        let caFile = directory.appending(path: "ca.pem")
        try Data(authority.certificatePEM.utf8).write(to: caFile)
        let leaf = try authority.issue()
        let clients = try TestCertificateAuthority(name: "Courier Client CA")
        let client = try clients.issue(hosts: ["courier-client"], forClient: true).write(to: directory, name: "client")
        try await TestDatabase.withFresh { database in
            try await withTestServer(
                tls: .init(identity: leaf, clientCertificateAuthorityPEM: clients.certificatePEM, http2: true)
            ) { server in
                let echo = server.url("/echo")
                let identity = ["--cert", client.certificate, "--key", client.privateKey]
                var outcome = try await work(
                    echo,
                    ["--cacert", caFile.path(), "--http2"] + identity,
                    database: database,
                    in: directory
                )
                #expect(
                    outcome.status == 0 && server.requests("/echo").last?.version == "HTTP/2",
                    "--cacert --http2: \(outcome.stderr)"
                )
                outcome = try await work(echo, ["--insecure"] + identity, database: database, in: directory)
                #expect(outcome.status == 0 && server.hits("/echo") == 2, "--insecure: \(outcome.stderr)")
                outcome = try await work(
                    echo,
                    ["--cacert", caFile.path(), "--pin", "sha256/" + leaf.publicKeyPin] + identity,
                    database: database,
                    in: directory
                )
                #expect(outcome.status == 0 && server.hits("/echo") == 3, "--pin: \(outcome.stderr)")
                outcome = try await work(echo, ["--cacert", caFile.path()], database: database, in: directory)
                #expect(
                    outcome.status != 0 && server.hits("/echo") == 3,
                    "no client certificate, yet the server answered"
                )
            }
        }
    }
}
