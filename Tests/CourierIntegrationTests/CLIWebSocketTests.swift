import CourierTestSupport
import CourierTesting
import Foundation
import Testing

/// `courier ws`: stdin lines out, messages to stdout, the CLI's exit codes.
@Suite("courier ws", .timeLimit(.minutes(3)))
struct CLIWebSocketTests {
    /// A file holding `text`, for stdin.
    private func input(_ text: String) throws -> URL {
        let url = try newTemporaryDirectory(prefix: "courier-ws").appending(path: "stdin")
        try Data(text.utf8).write(to: url)
        return url
    }

    private func wsURL(_ server: TestServer, _ path: String) -> String {
        server.url(path).absoluteString.replacing("http://", with: "ws://")
    }

    @Test func linesGoOutAndMessagesComeBackOnePerLine() async throws {
        let har = try newTemporaryDirectory(prefix: "courier-ws-har").appending(path: "ws.har")
        try await withTestServer { server in
            let run = try await CLI.run(
                ["ws", wsURL(server, "/ws/echo"), "-H", "X-Via: cli", "--compress", "--har", har.path()],
                standardInput: try input("hello\nsecond line\n")
            )
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout == "hello\nsecond line\n")
            #expect(server.requests("/ws/echo").first?.header("x-via") == "cli")
            #expect(server.counter("ws-client-close:/ws/echo") == 1000, "stdin's end closed it with 1000")
        }
        // `--har` records the connection's entry with its four messages.
        let log = try JSONSerialization.jsonObject(with: Data(contentsOf: har)) as? [String: Any]
        let entries = (log?["log"] as? [String: Any])?["entries"] as? [[String: Any]]
        let messages = entries?.first?["_webSocketMessages"] as? [[String: Any]]
        #expect(
            entries?.count == 1
                && messages?.compactMap { $0["data"] as? String }.sorted() == [
                    "hello", "hello", "second line", "second line",
                ]
        )
    }

    @Test func binaryMessagesAsBase64JSONOrAFile() async throws {
        try await withTestServer { server in
            let json = try await CLI.run(["ws", "-n", wsURL(server, "/ws/flood?count=2&size=3"), "--json"])
            #expect(
                json.status == 0
                    && json.stdout == String(repeating: "{\"type\":\"binary\",\"base64\":\"YWFh\"}\n", count: 2)
            )
            let file = try newTemporaryDirectory(prefix: "courier-ws").appending(path: "frames.bin")
            let saved = try await CLI.run(
                [
                    "ws", "--no-input", wsURL(server, "/ws/flood?count=4&size=5"), "--binary-output",
                    file.path(percentEncoded: false),
                ]
            )
            #expect(saved.status == 0 && saved.stdout.isEmpty)
            #expect(try Data(contentsOf: file) == Data(repeating: 0x61, count: 20))
        }
    }

    @Test func exitCodesAsTheOtherCommands() async throws {
        try await withTestServer { server in
            let cases: [(String, [String], Int32, String)] = [
                ("/ws/hostile?kind=masked", [], 56, "closed with 1002"),
                ("/ws/hostile?kind=oversize", ["--max-message", "64K"], 63, "closed with 1009"),
                ("/ws/status/403", [], 22, "HTTP 403"),
                ("/ws/close?code=4001&reason=bye", [], 0, "4001 \"bye\""),
                ("/ws/hostile?kind=drop", [], 1, "without a close frame"),
            ]
            for (path, extra, status, said) in cases {
                // `-n`: stdin's end would otherwise close first and race the server's own ending.
                let run = try await CLI.run(["ws", "-n", wsURL(server, path)] + extra)
                #expect(run.status == status, "\(path): \(run.stderr)")
                #expect(run.stderr.contains(said), "\(path): \(run.stderr)")
            }
            let refused = try await CLI.run(["ws", "ws://127.0.0.1:1/"])
            #expect(refused.status == 7)
            let usage = try await CLI.run(["ws", wsURL(server, "/ws/echo"), "--ping", "soon"])
            #expect(usage.status == 64)
        }
    }

    @Test func pipedLinesGetTheirAnswersBeforeTheClose() async throws {
        try await withTestServer { server in
            // The server answers each message 300 ms after it came and sends nothing once it has the client's
            // close, as Python's `websockets` does: the close waits for a quiet second.
            let url = wsURL(server, "/ws/echo?delay=300")
            let run = try await CLI.run(["ws", url], standardInput: try input("hello\nwörld\n"))
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout == "hello\nwörld\n")
            // Without the linger the close goes first and the answers are lost: the route is what the test says.
            let hasty = try await CLI.run(["ws", url, "--linger", "0"], standardInput: try input("hello\n"))
            #expect(hasty.status == 0 && hasty.stdout.isEmpty, "\(hasty.status) \(hasty.stdout) \(hasty.stderr)")
        }
    }

    @Test func maxTimeAndReadTimeoutBoundTheExchange() async throws {
        try await withTestServer { server in
            // A server that says nothing after the handshake: -m bounds the connection, --read-timeout the
            // silence, each with curl's 28.
            for bound in [["-m", "1"], ["--read-timeout", "0.5"]] {
                let run = try await CLI.run(["ws", "-n", wsURL(server, "/ws/silent")] + bound)
                #expect(run.status == 28, "\(bound): \(run.stderr)")
                #expect(run.stderr.contains("timed out") || run.stderr.contains("timeout"), "\(run.stderr)")
            }
            // A message within the read timeout keeps the connection open: the flood's close ends it with 0.
            let busy = try await CLI.run(["ws", "-n", wsURL(server, "/ws/flood?count=2&size=1"), "--read-timeout", "5"])
            #expect(busy.status == 0, "\(busy.stderr)")
        }
    }

    @Test func memoryStaysFlatUnderAStreamOfMessages() async throws {
        try await withTestServer { server in
            // 1 MiB, then 64 MiB in 64 KiB messages, written to /dev/null: the peak differs by little (a stream
            // held in memory would add 64 MiB; the benchmark reads 1 GiB and 4 GiB).
            var peaks: [Int] = []
            for count in [16, 1024] {
                let run = try await CLI.run(
                    ["ws", "-n", wsURL(server, "/ws/flood?count=\(count)&size=65536"), "--binary-output", "/dev/null"],
                    measuringPeakRSS: true
                )
                #expect(run.status == 0, "\(run.stderr)")
                peaks.append(run.peakRSSKiB ?? 0)
            }
            #expect(peaks[1] - peaks[0] < 16 * 1024, "peak RSS \(peaks) KiB")
        }
    }
}
