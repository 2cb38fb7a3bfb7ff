import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import NIOCore
import Testing

@Suite("Uploads: progress and cancel", .timeLimit(.minutes(1)))
struct UploadTests {
    @Test func aFileUploadReportsProgressUpToItsLength() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("upload.bin")
        let size = 3_000_000
        try ServerFiles.data(count: size).write(to: file)
        try await withServerSession { session, _ in
            let upload = try session.upload(Request<Echo>.post("/echo", body: .file(file)))
            var values: [UploadProgress] = []
            for await progress in upload.progress { values.append(progress) }
            let echo = try await upload.response.value
            #expect(echo.bodyLength == size && echo.bodySHA256 == ServerFiles.sha256(count: size))
            #expect(values.last?.completedBytes == Int64(size) && values.last?.fraction == 1)
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
            #expect(values.allSatisfy { $0.totalBytes == Int64(size) })
        }
    }

    /// A body that can be read again from its start (a file, a form of files and fields, a stream made
    /// replayable) goes again whole on a retry and a 307, counted again from zero; a one-pass stream goes once.
    @Test func anUploadThatCanBeReadAgainIsRetriedAndRedirectedWhole() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("upload.bin")
        let size = 300_000
        try ServerFiles.data(count: size).write(to: file)
        var form = MultipartFormData()
        try form.append(field: "title", value: "retried")
        try form.append(file: file, name: "photo")
        let formLength = try #require(try form.contentLength())
        try await withServerSession({ $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10)) }) {
            session,
            server in
            let retried = try session.upload(Request<Data>.put("/flaky/file?failures=1", body: .file(file)))
            var values: [UploadProgress] = []
            for await progress in retried.progress { values.append(progress) }
            #expect(try await retried.response.status.code == 200)
            #expect(server.requests("/flaky/file").map(\.bodyLength) == [size, size])
            #expect(values.last?.completedBytes == Int64(size), "counted again from zero, not twice")

            _ = try await session.upload(Request<Data>.put("/flaky/form?failures=1", body: try form.body())).response
            #expect(server.requests("/flaky/form").map(\.bodyLength) == [Int(formLength), Int(formLength)])

            let compressed = try await Request<Data>.put("/flaky/gzip?failures=1", body: .file(file))
                .compressingBody(.gzip(level: 1))
            _ = try await session.upload(compressed).response
            let lengths = server.requests("/flaky/gzip").map(\.bodyLength)
            #expect(lengths.count == 2 && lengths[0] == lengths[1] && lengths[0] > 0, "compressed again: \(lengths)")

            let redirected = try session.upload(Request<Echo>.post("/redirect/1?status=307", body: .file(file)))
            let echo = try await redirected.response.value
            #expect(
                echo.method == "POST" && echo.bodyLength == size && echo.bodySHA256 == ServerFiles.sha256(count: size)
            )

            let chunks = AsyncStream<ByteBuffer> {
                $0.yield(ByteBuffer(repeating: 7, count: 5000))
                $0.finish()
            }
            let once = try session.upload(
                Request<Data>.put("/flaky/once?failures=1", body: .stream(chunks, length: 5000))
            )
            let error = await courierError { _ = try await once.response }
            #expect(error?.status?.code == 503 && server.hits("/flaky/once") == 1, "a one-pass stream goes once")
        }
    }

    /// Any call reports its progress, as the seeds' progress callback does: the body received, and the one sent.
    @Test func aTransferReportsTheBodiesItReceivesAndSends() async throws {
        try await withServerSession { session, _ in
            let download = try session.transfer(Request<Data>.get("/drip?size=300000&chunk=30000&interval=30"))
            var received: [TransferProgress] = []
            for await progress in download.downloadProgress { received.append(progress) }
            let body = try await download.response.body
            #expect(body.count == 300_000)
            #expect(received.count >= 2, "\(received)")
            #expect(received.last?.completedBytes == 300_000)
            #expect(zip(received, received.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
            var sentNothing: [TransferProgress] = []
            for await progress in download.uploadProgress { sentNothing.append(progress) }
            #expect(sentNothing.last?.completedBytes ?? 0 == 0)

            let upload = try session.transfer(
                Request<Echo>.post("/echo", body: .bytes(ServerFiles.data(count: 2_000_000)))
            )
            var sent: [TransferProgress] = []
            for await progress in upload.uploadProgress { sent.append(progress) }
            #expect(try await upload.response.value.bodyLength == 2_000_000)
            #expect(
                sent.last
                    == TransferProgress(
                        completedBytes: 2_000_000,
                        totalBytes: 2_000_000,
                        bytesPerSecond: sent.last?.bytesPerSecond ?? 0
                    )
            )
            var answer: [TransferProgress] = []
            for await progress in upload.downloadProgress { answer.append(progress) }
            #expect((answer.last?.completedBytes ?? 0) > 0 && answer.last?.completedBytes == answer.last?.totalBytes)
        }
    }

    /// A transfer's progress starts again from zero when its body does (a retry after a cut), and two transfers of
    /// one URL at once are two exchanges, each watching its own body arrive (never one shared call).
    @Test func aTransferCountsTheBodyItGotAndSharesNoCall() async throws {
        try await withServerSession { session, server in
            let retried = try session.transfer(
                Request<Data>.get("/file/300000?cut=100000&faults=1&key=again")
                    .retry(RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(10)))
            )
            var received: [TransferProgress] = []
            for await progress in retried.downloadProgress { received.append(progress) }
            #expect(try await retried.response.body.count == 300_000)
            #expect(server.counter("file:again") == 2)
            #expect(received.last?.completedBytes == 300_000, "\(received.suffix(3))")

            let url = "/drip?size=100000&chunk=20000&interval=30"
            let first = try session.transfer(Request<Data>.get(url))
            let second = try session.transfer(Request<Data>.get(url))
            var seen: [Int64] = []
            for await progress in second.downloadProgress { seen.append(progress.completedBytes) }
            _ = try await (first.response, second.response)
            #expect(server.hits("/drip") == 2)
            #expect(seen.last == 100_000)
        }
    }

    @Test func cancellingStopsAnEndlessUploadPromptly() async throws {
        try await withServerSession { session, _ in
            let chunks = AsyncStream<ByteBuffer> { continuation in
                let feeder = Task {
                    while !Task.isCancelled {
                        continuation.yield(ByteBuffer(repeating: 7, count: 16 * 1024))
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                    continuation.finish()
                }
                continuation.onTermination = { _ in feeder.cancel() }
            }
            let upload = try session.upload(Request<Data>.post("/echo", body: .stream(chunks)))
            var iterator = upload.progress.makeAsyncIterator()
            while let progress = await iterator.next(), progress.completedBytes < 64 * 1024 {}
            upload.cancel()
            let error = await courierError { _ = try await upload.response }  // the suite's time limit catches a hang
            #expect(error?.code == .cancelled)
        }
    }

    @Test func aBatchOfFilesReportsWhichOnesFailed() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = (0..<4).map { directory.appendingPathComponent("photo\($0).jpg") }
        for (index, file) in files.enumerated() where index != 2 {
            try ServerFiles.data(count: 10_000 * (index + 1)).write(to: file)
        }
        try await withServerSession { session, server in
            let outcome = try await session.uploadFiles(
                files,
                to: "/multipart",
                field: "photo",
                fields: [("album", "trip")],
                options: BatchOptions(concurrency: 2)
            )
            #expect(outcome.failedFiles == [files[2]])
            #expect(server.hits("/multipart") == 3)
            if case .failure(let error) = outcome.batch.results[2] {
                #expect(error.code == .unreadableBody)
            } else {
                Issue.record("expected a failure")
            }
            let third = try outcome.batch.results[3].get().body
            #expect(String(decoding: third, as: UTF8.self).contains(ServerFiles.sha256(count: 40_000)))
        }
    }

    /// The server has the whole body (its Content-Length) and answers while the stream has not yet said it
    /// has ended: AsyncHTTPClient then ends the exchange without telling its delegate, which once left an
    /// upload redirected in a loop waiting forever. The answer is delivered, followed, or typed, every time.
    @Test(arguments: [
        ("/redirect-to?status=302&url=/small", CourierError.Code?.none),
        ("/status/404", .httpStatus), ("/redirect-loop", .redirectLoop),
    ])
    func anAnswerBeforeTheBodyStreamEndsIsDelivered(path: String, expected: CourierError.Code?) async throws {
        try await withServerSession({ $0.timeouts.readIdle = .seconds(3) }) { session, _ in
            let size = 64 * 1024
            let chunks = AsyncStream<ByteBuffer> { continuation in
                let feeder = Task {
                    continuation.yield(ByteBuffer(repeating: 7, count: size))
                    try? await Task.sleep(for: .milliseconds(300))  // the answer arrives meanwhile
                    continuation.finish()
                }
                continuation.onTermination = { _ in feeder.cancel() }
            }
            let upload = try session.upload(Request<Data>.post(path, body: .stream(chunks, length: Int64(size))))
            let outcome = try await within(.seconds(10)) {
                do { return Result<Data, CourierError>.success(try await upload.response.body) } catch let error
                    as CourierError
                {
                    return .failure(error)
                }
            }
            switch outcome {
            case nil: Issue.record("the upload to \(path) never ended")
            case .success(let body)?:
                #expect(expected == nil && body == ServerFiles.smallData)
            case .failure(let error)?: #expect(error.code == expected, "\(error)")
            }
        }
    }

    @Test func aServerClosingHalfwayGivesAClearErrorAndThePostIsNotRetried() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("big.bin")
        try ServerFiles.data(count: 8_000_000).write(to: file)
        try await withServerSession({ $0.retryPolicy = RetryPolicy(maxAttempts: 4, baseDelay: .milliseconds(10)) }) {
            session,
            server in
            let upload = try session.upload(Request<Data>.post("/fault/cut-upload?fraction=0.5", body: .file(file)))
            let error = await courierError { _ = try await upload.response }
            #expect([.connectionClosed, .connectionReset].contains(error?.code), "\(String(describing: error))")
            #expect(server.hits("/fault/cut-upload") == 1)
        }
    }

    /// A body far past what the connection's buffers hold once the server stops reading: 256 MiB made as it is
    /// sent, or 64 MiB in memory.
    @Test(arguments: [false, true])
    func aServerThatStopsReadingAnUploadEndsItWithAWriteIdleTimeout(inMemory: Bool) async throws {
        let chunks = SlowChunks(count: 4096, size: 1 << 16, interval: .zero)
        let body: RequestBody =
            inMemory ? .bytes(Data(count: 64 << 20)) : .stream(chunks, length: chunks.length)
        try await withServerSession({ $0.timeouts.readIdle = .milliseconds(300) }) { session, server in
            let request = Request<Data>.post("/fault/stop-reading?after=\(1 << 20)", body: body)
            let started = ContinuousClock.now
            let error = await courierError { _ = try await session.upload(request).response }
            #expect(error?.code == .timeout && error?.timeoutKind == .writeIdle, "\(String(describing: error))")
            #expect(ContinuousClock.now - started < .seconds(20))
            #expect(server.hits("/fault/stop-reading") == 1)
        }
    }
}
