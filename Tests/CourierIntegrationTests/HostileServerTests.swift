import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// What a hostile server sends must never end the process: each answer here once trapped (in AsyncHTTPClient, in
/// NIO or in Courier's own arithmetic) and is now a typed error.
@Suite("A server can never end the process", .timeLimit(.minutes(2)))
struct HostileServerTests {
    // MARK: Status codes AsyncHTTPClient takes for informational heads

    @Test(arguments: ["042", "000", "099", "009"])
    func aStatusBelow100IsAnInvalidResponseOnEveryKindOfCall(code: String) async throws {
        try await withServerSession { session, server in
            let path = "/fault/status/\(code)"
            let sent = await courierError { _ = try await session.send(Request<Data>.get(path)) }
            #expect(sent?.code == .invalidResponse)
            #expect(sent?.message.contains("invalid status code \(Int(code) ?? -1)") == true)
            let streamed = await courierError { _ = try await session.stream(Request<Data>.get(path)) }
            #expect(streamed?.code == .invalidResponse)
            let cached = await courierError { _ = try await session.send(Request<Data>.get(path).cachePolicy(.http)) }
            #expect(cached?.code == .invalidResponse)
            // The session, its pool and its connections go on.
            let after = try await session.send(Request<Data>.get("/small"))
            #expect(after.status == .ok)
        }
    }

    @Test func aStatusBelow100FailsOneBatchMemberAndNotTheBatch() async throws {
        try await withServerSession { session, _ in
            let outcome = try await session.batch([
                Request<Data>.get("/small"), Request<Data>.get("/fault/status/042"),
                Request<Data>.get("/small"),
            ])
            #expect(outcome.results.count == 3 && outcome.failedIndices == [1])
            let failures = outcome.results.compactMap { result -> CourierError? in
                if case .failure(let error) = result { return error } else { return nil }
            }
            #expect(failures.map(\.code) == [.invalidResponse])
        }
    }

    @Test func aStatusBelow100IsADownloadFailureNotACrash() async throws {
        try await withDownloads { manager, server, directory in
            let download = try await manager.add(
                server.url("/fault/status/042"),
                to: .file(directory.appending(path: "x.bin")),
                options: DownloadOptions(retries: 0)
            )
            let error = await courierError { _ = try await download.completion() }
            #expect(error?.code == .invalidResponse)
        }
    }

    @Test func theCLIAnswersABadStatusWithOneLine() async throws {
        try await withTestServer { server in
            let outcome = try await CLI.run(["get", server.url("/fault/status/042").absoluteString])
            #expect(outcome.status == 1)
            #expect(outcome.stderr.split(separator: "\n").count == 1)
            #expect(outcome.stderr.contains("invalidResponse"))
        }
    }

    @Test(arguments: [42, 1000])
    func anHTTP2StatusOutside100To999IsAnInvalidResponse(code: Int) async throws {
        let authority = try TestCertificateAuthority()
        let leaf = try authority.issue()
        try await withServerSession(
            tls: .init(identity: leaf, http2: true),
            {
                $0.tls.default = TLSPolicy(trustRoots: .pem(authority.certificatePEM))
            }
        ) { session, _ in
            let error = await courierError { _ = try await session.send(Request<Data>.get("/fault/status/\(code)")) }
            #expect(error?.code == .invalidResponse)
            let after = try await session.send(Request<Data>.get("/small"))
            #expect(after.status == .ok)
        }
    }

    // MARK: Ports NIO's SocketAddress cannot hold

    @Test(arguments: [
        "http://127.0.0.1:65536/", "http://[::1]:70000/", "http://127.0.0.1:0/",
        "http://127.0.0.1:99999999999999999999999/",
    ])
    func aPortOutOfRangeIsAnInvalidURL(url: String) async throws {
        try await withSession { session in
            let error = await courierError { _ = try await session.send(Request<Data>.get(url)) }
            #expect(error?.code == .invalidURL)
            #expect(error?.message.contains("port") == true)
        }
    }

    @Test func aRedirectToAPortOutOfRangeIsAnInvalidURL() async throws {
        try await withServerSession { session, _ in
            for location in ["http://127.0.0.1:99999/", "http://127.0.0.1:123456789012345678901234/x"] {
                let query = location.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                let error = await courierError {
                    _ = try await session.send(Request<Data>.get("/redirect-to?url=\(query)"))
                }
                #expect(error?.code == .invalidURL)
                #expect(error?.message.contains("port") == true)
            }
        }
    }

    @Test func aTransportRefusesAPortOutOfRangeWhoeverBuiltTheRequest() async throws {
        let transport = AsyncHTTPClientTransport()
        let request = PreparedRequest(
            method: .get,
            url: try #require(URL(string: "http://127.0.0.1:65536/")),
            headers: [:],
            body: .empty,
            timeouts: Timeouts(),
            deadline: .now + .seconds(10)
        )
        let error = await courierError { _ = try await transport.send(request) }
        try await transport.shutdown()
        #expect(error?.code == .invalidURL)
    }

    @Test func theCLIAndADownloadRefuseAPortOutOfRange() async throws {
        let outcome = try await CLI.run(["get", "http://127.0.0.1:65536/"])
        #expect(outcome.status == 64 && outcome.stderr.hasPrefix("courier: URL: ") && outcome.stderr.contains("port"))
        try await withDownloads { manager, _, directory in
            let error = await courierError {
                _ = try await manager.add(
                    try #require(URL(string: "http://127.0.0.1:70000/f")),
                    to: .file(directory.appending(path: "f"))
                )
            }
            #expect(error?.code == .invalidURL)
        }
    }

    // MARK: Credentials in a URL

    @Test func credentialsInAURLAreSentAsBasicAndNeverLeftInTheURL() async throws {
        try await withServerSession { session, server in
            let port = server.url("/").port ?? 0
            let echo = try await session.send(Request<Echo>.get("http://ada:p%40ss@127.0.0.1:\(port)/echo"))
            #expect(echo.value.header("authorization") == "Basic " + Data("ada:p@ss".utf8).base64EncodedString())
            #expect(echo.request.url.user() == nil && !echo.request.url.absoluteString.contains("p%40ss"))
            // A username alone (a token) travels the same way; an Authorization of the caller's own wins.
            let token = try await session.send(Request<Echo>.get("http://T0KEN@127.0.0.1:\(port)/echo"))
            #expect(token.value.header("authorization") == "Basic " + Data("T0KEN:".utf8).base64EncodedString())
            let own = try await session.send(
                Request<Echo>.get("http://ada:pw@127.0.0.1:\(port)/echo").header("Authorization", "Bearer mine")
            )
            #expect(own.value.header("authorization") == "Bearer mine")
        }
    }

    // MARK: Content-Range numbers past Int64

    @Test(arguments: [2, 1])
    func aContentRangeThatOverflowsIsARangeMismatch(connections: Int) async throws {
        try await withDownloads { manager, server, directory in
            let target = directory.appending(path: "huge-range.bin")
            // With two connections the first segment's 206 overflows; with one, the resume after a cut does.
            let options =
                connections == 2
                ? DownloadOptions(connections: 2, minimumSegmentBytes: 10_000, retries: 0)
                : DownloadOptions(retries: 1, retryDelay: .milliseconds(10))
            let query =
                connections == 2 ? "huge-range-after=0&key=huge2" : "cut=50000&faults=1&huge-range-after=1&key=huge1"
            let download = try await manager.add(
                server.url("/file/100000?\(query)"),
                to: .file(target),
                options: options
            )
            let error = await courierError { _ = try await download.completion() }
            #expect(error?.code == .rangeMismatch)
            #expect(!FileManager.default.fileExists(atPath: target.path))
        }
    }
}

/// What a download reports as saved is true: one transfer per destination at a time, and a checksum that does not
/// match never blocks the next run.
@Suite("What a download reports as saved is true", .timeLimit(.minutes(2)))
struct SavedMeansSavedTests {
    let size = 300_000

    @Test func everyGzipMemberIsPartOfTheBodyAndTrailingGarbageIsRefused() async throws {
        try await withServerSession { session, _ in
            let whole = try await session.send(Request<String>.get("/fault/gzip-members"))
            #expect(whole.value == "first member, second member")
            let garbage = await courierError {
                _ = try await session.send(Request<String>.get("/fault/gzip-members?trailer=junk"))
            }
            #expect(garbage?.code == .decompression)
        }
    }

    @Test(arguments: [true, false])
    func aSecondTransferToTheSameDestinationIsRefusedAndTheFirstEndsWhole(secondResumes: Bool) async throws {
        try await withDownloads { first, server, directory in
            let target = directory.appending(path: "shared.bin")
            let key = "busy-\(secondResumes)"
            let slow = try await first.add(server.url("/file/\(size)?rate=150000&key=\(key)"), to: .file(target))
            // The second starts once the first is writing, not after a fixed time.
            await eventually("the first transfer has sent bytes") { server.counter("file-bytes:\(key)") > 0 }
            try await withSession { session in
                let second = try DownloadManager(session: session)
                let other = try await second.add(
                    server.url("/file/1000"),
                    to: .file(target),
                    options: DownloadOptions(retries: 0, resumable: secondResumes)
                )
                let error = await courierError { _ = try await other.completion() }
                #expect(error?.code == .destinationBusy)
            }
            #expect(try await slow.completion() == target.standardizedFileURL)
            #expect(try sha256(of: target) == ServerFiles.sha256(count: size))
            #expect(!target.partFile.exists && !target.resumeRecord.exists)
        }
    }

    @Test(arguments: [217, 218, 243, 251, 255])
    func anyNameTheFilesystemTakesCanBeDownloadedToAndResumed(bytes: Int) async throws {
        try await withDownloads { manager, server, directory in
            let name = String(repeating: "n", count: bytes - 4) + ".bin"
            let target = directory.appending(path: name)
            // A cut midway makes the transfer write its record (and its temporary name) and resume from it.
            let url = server.url("/file/\(size)?cut=70000&faults=1&key=long\(bytes)")
            let download = try await manager.add(
                url,
                to: .file(target),
                options: DownloadOptions(retryDelay: .milliseconds(10))
            )
            #expect(try await download.completion() == target.standardizedFileURL)
            #expect(try sha256(of: target) == ServerFiles.sha256(count: size))
            #expect(server.counter("file:long\(bytes)") == 2)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [name])
        }
    }

    @Test func twoURLsWhoseNamesCollideAreSavedUnderTwoNames() async throws {
        try await withTestServer { server in
            let directory = try temporaryDownloadDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let list = directory.appending(path: "list.txt")
            // One name from Content-Disposition, the same one from the other URL's path.
            let named = server.url("/file/1000?disposition=attachment%3B%20filename%3D%22same.bin%22").absoluteString
            try Data([named, server.url("/file/2000/same.bin").absoluteString].joined(separator: "\n").utf8).write(
                to: list
            )
            let folder = directory.appending(path: "out")
            let outcome = try await CLI.run(["download", "-i", list.path, "-d", folder.path, "--create-dirs"])
            #expect(outcome.status == 0, "\(outcome.stderr)")
            #expect(try sha256(of: folder.appending(path: "same.bin")) == ServerFiles.sha256(count: 1000))
            #expect(try sha256(of: folder.appending(path: "same (1).bin")) == ServerFiles.sha256(count: 2000))
            #expect(outcome.stdout.split(separator: "\n").count == 2)
        }
    }

    @Test func aFileNamedTwiceForTwoURLsIsRefused() async throws {
        try await withDownloads { manager, server, directory in
            let target = directory.appending(path: "one.bin")
            _ = try await manager.add(server.url("/file/1000?rate=2000"), to: .file(target))
            let error = await courierError { _ = try await manager.add(server.url("/file/2000"), to: .file(target)) }
            #expect(error?.code == .destinationBusy)
        }
    }

    @Test func aChecksumMismatchDiscardsThePartSoTheNextRunFetchesAgain() async throws {
        try await withDownloads { manager, server, directory in
            let target = directory.appending(path: "checked.bin")
            let wrong = try DownloadChecksum.sha256(String(repeating: "0", count: 64))
            let url = server.url("/file/\(size)?key=mismatch")
            let first = try await manager.add(
                url,
                to: .file(target),
                options: DownloadOptions(checksum: wrong, retries: 0)
            )
            let error = await courierError { _ = try await first.completion() }
            #expect(error?.code == .integrity && error?.message.contains("fetches it again") == true)
            #expect(
                !target.partFile.exists && !target.resumeRecord.exists
                    && !FileManager.default.fileExists(atPath: target.path)
            )

            // The next run: a new manager, as a new process would have.
            let right = try DownloadChecksum.sha256(ServerFiles.sha256(count: size))
            try await withSession { session in
                let again = try await DownloadManager(session: session).add(
                    url,
                    to: .file(target),
                    options: DownloadOptions(checksum: right)
                )
                _ = try await again.completion()
            }
            #expect(try sha256(of: target) == right.hex)
            #expect(server.counter("file:mismatch") == 2)
        }
    }
}

/// A batch that hands each result on in input order and keeps none (issue 41: `courier batch` held every body).
@Suite("A batch consumed as it runs", .timeLimit(.minutes(1)))
struct StreamedBatchTests {
    @Test(arguments: [1, 4, 64])
    func resultsComeInInputOrderOneAtATimeWithinTheWindow(window: Int) async throws {
        try await withServerSession { session, server in
            // Early requests are slow, later ones fast: the later ones wait in the window for the earlier ones.
            let requests = (0..<40).map { Request<Data>.get("/delay/\(max(0, 30 - $0))?n=\($0)") }
            let seen = Locked<(order: [Int], consuming: Bool, overlapped: Bool, mostAhead: Int)>(([], false, false, 0))
            let progress = try await session.run(Batch(requests, options: BatchOptions(concurrency: 8)), window: window)
            { index, result in
                let started = server.hits("/delay/0") + (1...30).reduce(0) { $0 + server.hits("/delay/\($1)") }
                seen.withLock {
                    $0.overlapped = $0.overlapped || $0.consuming
                    $0.consuming = true
                    $0.order.append(index)
                    // Requests the server has seen beyond this one: at most the window (plus the workers' own).
                    $0.mostAhead = max($0.mostAhead, started - index - 1)
                }
                #expect((try? result.get())?.status == .ok)
                try? await Task.sleep(for: .milliseconds(1))
                seen.withLock { $0.consuming = false }
            }
            let result = seen.withLock { $0 }
            #expect(result.order == Array(0..<40) && !result.overlapped)
            #expect(result.mostAhead <= window + 8)
            #expect(progress.completed == 40 && progress.failed == 0)
        }
    }

    @Test func aFailFastBatchHandsOnEveryResultAndCountsWhatNeverStarted() async throws {
        try await withServerSession({ $0.validators = [StatusCodeValidator.successful] }) { session, _ in
            let requests = [Request<Data>.get("/status/500")] + (0..<20).map { _ in Request<Data>.get("/delay/50") }
            let count = Locked(0)
            let progress = try await session.run(
                Batch(requests, options: BatchOptions(concurrency: 2, mode: .failFast)),
                window: 2
            ) { _, _ in
                count.withLock { $0 += 1 }
            }
            #expect(count.withLock { $0 } == 21 && progress.failed >= 1 && progress.completed == 21)
        }
    }
}
