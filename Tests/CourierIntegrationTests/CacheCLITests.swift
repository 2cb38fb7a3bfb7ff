import Courier
import CourierTesting
import Foundation
import Testing

@Suite("courier --cache and courier cache", .timeLimit(.minutes(3)))
struct CacheCLITests {
    func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-cli-cache-\(UUID().uuidString)")
    }

    @Test func getServesFromTheCacheAndTheCacheCommandsManageIt() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withTestServer { server in
            let url = server.url("/cache/cli?cache-control=max-age=60").absoluteString
            let first = try await CLI.run(["get", url, "--cache", "http", "--cache-dir", directory.path])
            let second = try await CLI.run(["get", url, "--cache", "http", "--cache-dir", directory.path])
            #expect(first.stderr == "HTTP 200\n" && second.stderr == "HTTP 200 (cache)\n" && first.stdout == second.stdout)
            #expect(server.hits("/cache/cli") == 1)
            let ttl = try await CLI.run(["get", server.url("/cache/ttl").absoluteString, "--cache", "cache-else-network", "--ttl", "60",
                                         "--cache-dir", directory.path])
            #expect(ttl.status == 0)

            let stats = try await CLI.run(["cache", "stats", "--cache-dir", directory.path])
            #expect(stats.status == 0 && stats.stdout.hasPrefix("entries: 2\non disk: "))
            let list = try await CLI.run(["cache", "list", server.url("/cache/cli").absoluteString, "--cache-dir", directory.path])
            #expect(list.stdout.contains("200 GET \(server.url("/cache/cli").absoluteString)?cache-control=") && list.stderr == "1 entry\n")
            let miss = try await CLI.run(["get", server.url("/cache/none").absoluteString, "--cache", "cache-only", "--cache-dir", directory.path])
            #expect(miss.status == 1 && miss.stderr.hasPrefix("courier: cacheMiss: "))
            let clear = try await CLI.run(["cache", "clear", server.url("/cache/cli").absoluteString, "--cache-dir", directory.path])
            #expect(clear.stderr == "removed 1 entry\n")
            let clearAll = try await CLI.run(["cache", "clear", "--cache-dir", directory.path])
            #expect(clearAll.stderr == "removed 1 entry\n")
            let bad = try await CLI.run(["get", url, "--cache", "sometimes"])
            #expect(bad.status != 0 && bad.stderr.contains("--cache must be one of"))
            let badTTL = try await CLI.run(["get", url, "--cache", "http", "--ttl", "5"])
            #expect(badTTL.status != 0 && badTTL.stderr.contains("--ttl needs --cache cache-else-network"))
        }
    }

    /// SIGKILL a `courier batch` writing hundreds of entries, several times: after each kill, every entry the
    /// reopened store returns is whole and is the answer for its own URL.
    @Test func killedWritersLeaveOnlyWholeEntries() async throws {
        let directory = temporaryDirectory()
        let list = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-kill-\(UUID().uuidString).txt")
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: list)
        }
        try await withTestServer { server in
            var survivors = 0
            for round in 0..<6 {
                let urls = (0..<800).map { server.url("/cache/r\(round)-\($0)?pad=\(String(repeating: "x", count: 200))").absoluteString }
                try urls.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
                _ = try await CLI.run(["batch", list.path, "--concurrency", "32", "--cache", "cache-else-network", "--cache-dir", directory.path],
                                      killAfter: .milliseconds(Int.random(in: 150...600)))
                let store = try DiskCacheStore(directory: directory)
                for summary in await store.summaries() {
                    let key = CacheKey(text: summary.key)
                    guard let entry = await store.entry(for: key) else { continue }  // a miss is allowed; a wrong entry is not
                    let answer = try JSONDecoder().decode(CacheAnswer.self, from: entry.body)
                    #expect(URL(string: entry.url)?.path() == answer.path)
                    survivors += 1
                }
            }
            #expect(survivors > 0)
        }
    }
}
