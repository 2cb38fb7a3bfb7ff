import Courier
import CourierTesting
import Foundation
import Testing

@Suite("courier --cache and courier cache", .timeLimit(.minutes(3)))
struct CacheCLITests {
    func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-cli-cache-\(UUID().uuidString)")
    }

    @Test func theCacheListShowsNoSecretOfAStoredURL() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let port = server.url("/").port ?? 0
            let url = "http://127.0.0.1:\(port)/cache/secret?cache-control=max-age=60&api_key=K3Y&token=T0K"
            let fetched = try await CLI.run(["get", url, "--cache", "http", "--cache-dir", directory.path])
            #expect(fetched.status == 0, "\(fetched.stderr)")
            let list = try await CLI.run(["cache", "list", "--cache-dir", directory.path])
            #expect(list.stdout.contains("/cache/secret"))
            for secret in ["hunter2", "K3Y", "T0K"] {
                #expect(!list.stdout.contains(secret), "\(secret) in \(list.stdout)")
            }
            let bad = try await CLI.run(["get", "http://ada:hunter2@127.0.0.1:70000/"])
            #expect(bad.status == 64 && bad.stderr.hasPrefix("courier: URL: ") && !bad.stderr.contains("hunter2"))
        }
    }

    @Test func getServesFromTheCacheAndTheCacheCommandsManageIt() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let url = server.url("/cache/cli?cache-control=max-age=60").absoluteString
            let first = try await CLI.run(["get", url, "--cache", "http", "--cache-dir", directory.path])
            let second = try await CLI.run(["get", url, "--cache", "http", "--cache-dir", directory.path])
            #expect(
                first.stderr == "HTTP 200\n" && second.stderr == "HTTP 200 (cache)\n" && first.stdout == second.stdout
            )
            #expect(server.hits("/cache/cli") == 1)
            let ttl = try await CLI.run([
                "get", server.url("/cache/ttl").absoluteString, "--cache", "cache-else-network", "--ttl", "60",
                "--cache-dir", directory.path,
            ])
            #expect(ttl.status == 0)

            let stats = try await CLI.run(["cache", "stats", "--cache-dir", directory.path])
            #expect(stats.status == 0 && stats.stdout.hasPrefix("entries: 2\non disk: "))
            let list = try await CLI.run([
                "cache", "list", server.url("/cache/cli").absoluteString, "--cache-dir", directory.path,
            ])
            #expect(
                list.stdout.contains("200 GET \(server.url("/cache/cli").absoluteString)?cache-control=")
                    && list.stderr == "1 entry\n"
            )
            let miss = try await CLI.run([
                "get", server.url("/cache/none").absoluteString, "--cache", "cache-only", "--cache-dir", directory.path,
            ])
            #expect(miss.status == 1 && miss.stderr.hasPrefix("courier: cacheMiss: "))
            let clear = try await CLI.run([
                "cache", "clear", server.url("/cache/cli").absoluteString, "--cache-dir", directory.path,
            ])
            #expect(clear.stderr == "removed 1 entry\n")
            let clearAll = try await CLI.run(["cache", "clear", "--cache-dir", directory.path])
            #expect(clearAll.stderr == "removed 1 entry\n")
            let bad = try await CLI.run(["get", url, "--cache", "sometimes"])
            #expect(bad.status != 0 && bad.stderr.contains("--cache must be one of"))
            let badTTL = try await CLI.run(["get", url, "--cache", "http", "--ttl", "5"])
            #expect(badTTL.status != 0 && badTTL.stderr.contains("--ttl needs --cache cache-else-network"))
            let emptyStore = try await CLI.run(["get", url, "--cache", "http", "--cache-store", ""])
            #expect(emptyStore.status == 1 && emptyStore.stderr.contains("the cache store is empty"))
        }
    }

    // Killing writers of the disk cache: CrashCampaignTests.cacheEntriesAreWholeOrMissingAfterEveryKill (50 kills).
}
