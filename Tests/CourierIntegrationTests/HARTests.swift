import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import NIOCore
import Testing

/// `Scripts/har-check`: whether it can run here (python3 with jsonschema and haralyzer); `.ci/run` installs them and
/// sets `COURIER_REQUIRE_HAR_CHECK`, so there the suite fails rather than skips without them.
private let harCheck = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Scripts/har-check")
private let harCheckRuns: Bool = {
    if ProcessInfo.processInfo.environment["COURIER_REQUIRE_HAR_CHECK"] != nil { return true }
    let process = Process()
    process.executableURL = harCheck
    process.arguments = ["--available"]
    guard (try? process.run()) != nil else { return false }
    process.waitUntilExit()
    return process.terminationStatus == 0
}()

/// HAR 1.2 logs, from the library's monitor and from `courier --har`, checked as a HAR viewer reads them.
@Suite("HAR 1.2 logs of what was sent and received", .timeLimit(.minutes(2)))
struct HARTests {
    /// Runs `Scripts/har-check` on `file`; returns what it printed, or records why it refused the file.
    private func viewerReads(_ file: URL) async throws -> String {
        let run = try await CLI.run([file.path(percentEncoded: false)], program: harCheck.path(percentEncoded: false))
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout
    }

    private func log(_ file: URL) throws -> [String: Any] {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        return try #require(json?["log"] as? [String: Any])
    }

    @Test(.enabled(if: harCheckRuns, "python3 with jsonschema and haralyzer is not installed"))
    func theRecorderWritesWhatAViewerOpens() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-har")
        let file = directory.appending(path: "run.har")
        let recorder = try HARRecorder(url: file, bodyLimit: 100)
        try await withServerSession({ $0.monitors = [recorder] }) { session, server in
            _ = try await session.send(Request<Data>.get("/redirect/1?token=s3cret&page=2"))
            _ = try await session.send(
                Request<Data>.post("/echo", body: .json(["password": "hunter2", "name": "ada"]))
                    .header("Authorization", "Bearer top-secret")
            )
            _ = try await session.send(Request<Data>.get("/bytes/1000"))
            _ = try? await session.send(Request<Data>.get("http://127.0.0.1:9/refused"))
            let streamed = try await session.stream(Request<Data>.get("/bytes/5000"))
            for try await _ in streamed.body {}
            #expect(!FileManager.default.fileExists(atPath: file.path(percentEncoded: false)), "whole or not there")
            _ = server
        }
        await eventually("every call was recorded, the redirect as an entry of its own") { recorder.entries == 6 }
        try recorder.finish()

        #expect(try await viewerReads(file).contains("6 entries"))
        let text = try String(contentsOf: file, encoding: .utf8)
        for secret in ["s3cret", "hunter2", "top-secret"] { #expect(!text.contains(secret), "\(secret) leaked") }
        var entries = try #require(try log(file)["entries"] as? [[String: Any]])
        // The redirect, as browsers record it: its own request, its 302 with the next URL, its own timings.
        let hop = entries.removeFirst()
        let hopRequest = try #require(hop["request"] as? [String: Any])
        let hopResponse = try #require(hop["response"] as? [String: Any])
        #expect((hopRequest["url"] as? String)?.hasSuffix("/redirect/1?token=<redacted>&page=2") == true)
        #expect(hopResponse["status"] as? Int == 302)
        #expect((hopResponse["redirectURL"] as? String)?.hasSuffix("/redirect/0?token=<redacted>&page=2") == true)
        #expect(hop["serverIPAddress"] as? String == "127.0.0.1" && hop["connection"] != nil)
        let first = try #require(entries.first)
        let request = try #require(first["request"] as? [String: Any])
        #expect((request["url"] as? String)?.hasSuffix("/redirect/0?token=<redacted>&page=2") == true)
        #expect(first["serverIPAddress"] as? String == "127.0.0.1" && first["connection"] != nil)
        let hopStart = try #require(hop["startedDateTime"] as? String)
        let finalStart = try #require(first["startedDateTime"] as? String)
        #expect(hopStart <= finalStart, "the final request starts where its redirect ended")
        let bytes = try #require(entries[2]["response"] as? [String: Any])
        let content = try #require(bytes["content"] as? [String: Any])
        #expect(content["size"] as? Int == 1000 && content["encoding"] as? String == "base64")
        #expect(content["comment"] as? String == "the first 100 of 1000 bytes")
        let failed = try #require(entries[3]["response"] as? [String: Any])
        #expect(failed["status"] as? Int == 0 && (entries[3]["_error"] as? String)?.contains("refused") == true)
        let stream = try #require((entries[4]["response"] as? [String: Any])?["content"] as? [String: Any])
        #expect(
            stream["size"] as? Int == 5000 && stream["comment"] as? String == "streamed to the caller, not recorded"
        )
    }

    /// A body that made the redaction backtrack (a key, then spaces with no value): quadratic, it took minutes at
    /// 32 KB, and the process did not end until it was done; the suite's two-minute limit fails it.
    @Test func redactingAHostileBodyTakesTimeLinearInItsLength() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-har")
        let file = directory.appending(path: "hostile.har")
        let recorder = try HARRecorder(url: file, bodyLimit: 64 << 10)
        let hostile = #"{"token":"# + String(repeating: " ", count: 32 << 10) + #"}, "password": "hunter2"}"#
        try await withServerSession({ $0.monitors = [recorder] }) { session, _ in
            _ = try await session.send(
                Request<Data>.post("/echo", body: .text(hostile, contentType: "application/json"))
            )
        }
        await eventually("the call was recorded") { recorder.entries == 1 }
        try recorder.finish()
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(!text.contains("hunter2") && text.contains(String(repeating: " ", count: 1000)))
    }

    /// A WebSocket's entry, as a browser writes one: the handshake as it went on the wire, the 101 and its
    /// headers, the connection's address and timings, and the messages both ways (text redacted as bodies are,
    /// binary in base64, each cut to the body limit).
    @Test(.enabled(if: harCheckRuns, "python3 with jsonschema and haralyzer is not installed"))
    func aWebSocketsEntryHasItsHandshakeAndMessages() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-har-ws")
        let file = directory.appending(path: "ws.har")
        let recorder = try HARRecorder(url: file, bodyLimit: 100)
        let monitor = MessageCollector()
        try await withServerSession({ $0.monitors = [recorder, monitor] }) { session, _ in
            try await session.webSocket(.get("/ws/echo?token=s3cret")) { socket in
                try await socket.send(#"{"password":"hunter2"}"#)
                try await socket.send(.binary(ByteBuffer(bytes: [0, 1, 2])))
                try await socket.send(String(repeating: "é", count: 100))
                var answers = 0
                for try await _ in socket {
                    answers += 1
                    if answers == 3 { break }
                }
            }
        }
        await eventually("the call was recorded") { recorder.entries == 1 }
        try recorder.finish()
        #expect(try await viewerReads(file).contains("1 entries"))
        let text = try String(contentsOf: file, encoding: .utf8)
        for secret in ["s3cret", "hunter2"] { #expect(!text.contains(secret), "\(secret) leaked") }

        let entry = try #require((try log(file)["entries"] as? [[String: Any]])?.first)
        #expect(entry["_resourceType"] as? String == "websocket")
        let request = try #require(entry["request"] as? [String: Any])
        let response = try #require(entry["response"] as? [String: Any])
        #expect((request["url"] as? String)?.hasPrefix("ws://127.0.0.1:") == true)
        func names(_ part: [String: Any]) -> [String] {
            (part["headers"] as? [[String: String]] ?? []).compactMap { $0["name"] }
        }
        #expect(["Upgrade", "Sec-WebSocket-Key", "Sec-WebSocket-Version"].allSatisfy(names(request).contains))
        #expect(response["status"] as? Int == 101 && names(response).contains("Sec-WebSocket-Accept"))
        #expect(request["httpVersion"] as? String == "HTTP/1.1")
        #expect(entry["serverIPAddress"] as? String == "127.0.0.1" && entry["connection"] != nil)
        #expect(((entry["timings"] as? [String: Double])?["connect"] ?? -1) >= 0)

        let messages = try #require(entry["_webSocketMessages"] as? [[String: Any]])
        #expect(messages.map { $0["type"] as? String } == ["send", "send", "send", "receive", "receive", "receive"])
        #expect(messages.map { $0["opcode"] as? Int } == [1, 2, 1, 1, 2, 1])
        #expect(messages[0]["data"] as? String == #"{"password":"<redacted>"}"#)
        #expect(messages[1]["data"] as? String == "AAEC")
        #expect(messages[2]["data"] as? String == String(repeating: "é", count: 50), "cut at 100 bytes")
        let times = messages.compactMap { $0["time"] as? Double }
        #expect(times.count == 6 && times == times.sorted())

        // The monitors see the same: the messages whole up to 64 KiB, the handshake as sent.
        let finished = try #require(monitor.all.first)
        #expect(finished.webSocketMessages.count == 6 && finished.webSocketMessagesLeftOut == 0)
        #expect(finished.webSocketMessages[2].byteCount == 200)
        #expect(finished.currentRequest.headers[.upgrade] == "websocket")
        #expect(finished.timing.connection?.isReused == false)
    }

    @Test(.enabled(if: harCheckRuns, "python3 with jsonschema and haralyzer is not installed"))
    func courierWritesOneFileForTheRunFailuresIncluded() async throws {
        let directory = try newTemporaryDirectory(prefix: "courier-har-cli")
        let file = directory.appending(path: "get.har").path(percentEncoded: false)
        try await withTestServer { server in
            let run = try await CLI.run([
                "get", server.url("/redirect/2").absoluteString, "-s", "-o", "/dev/null", "--har", file,
                "-H", "X-Api-Key: k3y",
            ])
            #expect(run.status == 0, "\(run.stderr)")
            #expect(try await viewerReads(URL(filePath: file)).contains("3 entries"), "two redirects and the answer")
            #expect(try !String(contentsOfFile: file, encoding: .utf8).contains("k3y"))

            let batchList = directory.appending(path: "list.txt")
            try Data("\(server.url("/echo"))\nPOST \(server.url("/echo"))\n".utf8).write(to: batchList)
            let batchFile = directory.appending(path: "batch.har").path(percentEncoded: false)
            let batch = try await CLI.run(["batch", batchList.path(percentEncoded: false), "--har", batchFile])
            #expect(batch.status == 0, "\(batch.stderr)")
            #expect(try await viewerReads(URL(filePath: batchFile)).contains("2 entries"))
        }
        let refusedFile = directory.appending(path: "refused.har").path(percentEncoded: false)
        let refused = try await CLI.run(["get", "http://127.0.0.1:9/", "--har", refusedFile])
        #expect(refused.status == 7)
        #expect(try await viewerReads(URL(filePath: refusedFile)).contains("1 entries"))

        let nowhere = try await CLI.run(["get", "http://127.0.0.1:9/", "--har", "/nonexistent-dir/x.har"])
        #expect(nowhere.status != 0 && nowhere.stderr.contains("HAR file"), "\(nowhere.stderr)")
    }
}
