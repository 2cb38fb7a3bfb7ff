import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

/// What the TheRequestPath article says of the code, checked against it: the kinds of call it names each take the
/// observed road (a monitor hears each end once), and the default configuration has no retry rule.
@Suite("The request path article holds", .timeLimit(.minutes(1)))
struct RequestPathStatementTests {
    static func article() throws -> String {
        let root = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try String(
            contentsOf: root.appending(path: "Sources/Courier/Courier.docc/TheRequestPath.md"),
            encoding: .utf8
        )
    }

    /// The article's text with its line breaks as spaces, so a statement can be looked up whole.
    static func statements() throws -> String {
        try article().split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: " ")
    }

    @Test func byDefaultThereIsNoRetryRule() throws {
        #expect(Configuration().retryPolicy == nil)
        #expect(try Self.statements().contains("By default there is no retry rule"))
    }

    @Test func everyKindOfCallItNamesEndsOnceAtTheMonitors() async throws {
        let statements = try Self.statements()
        #expect(statements.contains("(batch members, chain steps, uploads, cache-then-network)"))
        #expect(statements.contains("(each exchange of a download and of each of its segments)"))
        #expect(statements.contains("the empty answer to the `HEAD` that plans its segments"))
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let monitor = RecordingMonitor()
        try await withServerSession({
            $0.monitors = [monitor]
            $0.cache = ResponseCache(memory: MemoryCacheStore(), disk: nil)
        }) { session, server in
            func ends() -> Int { monitor.all.filter { $0 == "didComplete ok" }.count }
            var seen: [String: Int] = [:]
            func count(_ kind: String, _ call: () async throws -> Void) async throws {
                let before = ends()
                try await call()
                await eventually("\(kind) ends at the monitors") { ends() > before }
                seen[kind] = ends() - before
            }
            try await count("send") { _ = try await session.send(Request<Data>.get("/small")) }
            try await count("batch member") { _ = try await session.batch([Request<Data>.get("/small")]) }
            try await count("chain step") {
                _ = try await session.chain { try await $0.step("one", Request<Data>.get("/small")) }
            }
            try await count("upload") {
                _ = try await session.upload(Request<Data>.post("/echo", body: .bytes(Data("x".utf8)))).response
            }
            try await count("cache-then-network") {
                for try await _ in session.responses(for: Request<Data>.get("/json?max-age=60")) {}
            }
            try await count("stream") {
                for try await _ in try await session.stream(Request<Data>.get("/small")).body {}
            }
            try await count("download") {
                let manager = try DownloadManager(session: session)
                let download = try await manager.add(
                    server.url("/file/20000?key=path"),
                    to: .file(directory.appending(path: "a.bin"))
                )
                _ = try await download.completion()
            }
            // Each exchange ends as read: the HEAD that plans the segments, and each segment's GET (reading the
            // segment's last byte, the download reads its end too).
            try await count("segmented download") {
                let manager = try DownloadManager(session: session)
                let download = try await manager.add(
                    server.url("/file/400000?key=segments"),
                    to: .file(directory.appending(path: "b.bin")),
                    options: DownloadOptions(connections: 4, minimumSegmentBytes: 100_000)
                )
                _ = try await download.completion()
            }
            let exchanges = server.counter("file:segments")
            #expect(exchanges > 1, "the download took segments")
            #expect(
                seen == [
                    "send": 1, "batch member": 1, "chain step": 1, "upload": 1, "cache-then-network": 1, "stream": 1,
                    "download": 1, "segmented download": exchanges,
                ]
            )
            #expect(monitor.all.filter { $0.hasPrefix("didComplete") && $0 != "didComplete ok" } == [])
        }
    }
}
