import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import NIOCore
import Testing

/// A stream is a call like any other up to its head, and a transfer the pool tracks until its body ends.
@Suite("Streams on the call pipeline", .timeLimit(.minutes(1)))
struct StreamPipelineTests {
    @Test func theStreamIsInThePoolUntilItsBodyHasBeenRead() async throws {
        try await withServerSession { session, _ in
            let response = try await session.stream(
                Request<Data>.get("/drip", query: ["size": 4, "interval": 50]).tag("transfer")
            )
            #expect(await session.pool.snapshot().map(\.tag) == ["transfer"])
            var received = 0
            for try await chunk in response.body { received += chunk.readableBytes }
            #expect(received == 4)
            await eventually("the pool empties") { await session.pool.isEmpty }
        }
    }

    @Test func cancellingByTagStopsTheBodyAndClosesTheConnection() async throws {
        try await withServerSession { session, server in
            let response = try await session.stream(
                Request<Data>.get("/drip", query: ["size": 100, "interval": 100]).tag("long")
            )
            var iterator = response.body.makeAsyncIterator()
            _ = try await iterator.next()
            #expect(await session.pool.cancelAll(tag: "long") == 1)
            let error = await courierError { while try await iterator.next() != nil {} }
            #expect(error?.code == .cancelled)
            await eventually("the server sees the connection close") { server.aborts("/drip") == 1 }
            await eventually("the pool empties") { await session.pool.isEmpty }
        }
    }

    /// A streamed body is decoded as a whole one is, read as a sequence or handed to a sink: gzip decoded as it
    /// is read, a body cut short and a bomb refused; with decompression off it comes as it was sent.
    @Test func aStreamedBodyIsDecodedAsAWholeOneIs() async throws {
        try await withServerSession { session, _ in
            func read(_ path: String) async throws -> (HTTPFields, Data) {
                let response = try await session.stream(Request<Data>.get(path))
                var data = Data()
                for try await chunk in response.body { data.append(contentsOf: chunk.readableBytesView) }
                return (response.headers, data)
            }
            let (headers, document) = try await read("/gzip")
            #expect(String(decoding: document, as: UTF8.self) == ServerFiles.jsonDocument(items: 200))
            #expect(headers[.contentEncoding] == nil && headers[.contentLength] == nil)
            #expect(try await read("/small").1.count == 1024)  // nothing to decode: the body as it came
            let cut = await courierError { _ = try await read("/fault/truncated-gzip") }
            #expect(cut?.code == .decompression)
            let bomb = await courierError { _ = try await read("/fault/bomb") }
            #expect(bomb?.code == .decompression)

            let sink = CollectingSink()
            let head = try await session.stream(Request<Data>.get("/deflate"), into: sink)
            #expect(head.headers[.contentEncoding] == nil)
            #expect(String(decoding: sink.data.withLock { $0 }, as: UTF8.self) == ServerFiles.jsonDocument(items: 200))
            let sunkCut = await courierError {
                _ = try await session.stream(Request<Data>.get("/fault/truncated-gzip"), into: CollectingSink())
            }
            #expect(sunkCut?.code == .decompression)
        }
        try await withServerSession({ $0.decompressesResponses = false }) { session, _ in
            let response = try await session.stream(Request<Data>.get("/gzip"))
            var data = Data()
            for try await chunk in response.body { data.append(contentsOf: chunk.readableBytesView) }
            #expect(response.headers[.contentEncoding] == "gzip" && data.starts(with: [0x1f, 0x8b]))
        }
    }

    /// Each decoded chunk is at most 64 KiB however far its compressed chunk expands, and the ratio is checked per
    /// window, so a bomb that follows megabytes of incompressible bytes is refused as soon as it starts.
    @Test func decodedChunksAreBoundedAndTheRatioIsCheckedPerWindow() async throws {
        try await withServerSession({ $0.limits = ResponseLimits(maxBodyBytes: .max, maxDecompressionRatio: .max) }) {
            session,
            _ in
            let response = try await session.stream(Request<Data>.get("/fault/bomb", query: ["mib": 32]))
            var total = 0
            var largest = 0
            for try await chunk in response.body {
                total += chunk.readableBytes
                largest = max(largest, chunk.readableBytes)
            }
            #expect(total == 32 << 20)
            #expect(largest <= 64 * 1024, "a chunk of \(largest) bytes")
        }
        try await withServerSession { session, _ in
            // 8 MiB that do not compress first: the whole body's ratio stays under 200 for a gigabyte, a window's
            // passes it at once.
            let late = await courierError {
                let response = try await session.stream(
                    Request<Data>.get("/fault/bomb", query: ["mib": 64, "prefix": 8])
                )
                var read = 0
                for try await chunk in response.body { read += chunk.readableBytes }
                Issue.record("read \(read) bytes of the bomb")
            }
            #expect(late?.code == .decompression)
        }
    }

    /// A sink that keeps what it was given.
    final class CollectingSink: ResponseSink {
        let data = Locked(Data())
        func head(_ response: StreamedResponse) throws {}
        func write(_ chunk: ByteBuffer) throws { data.withLock { $0.append(contentsOf: chunk.readableBytesView) } }
    }

    @Test func aBodyDroppedUnreadEndsTheTransfer() async throws {
        try await withServerSession { session, server in
            do {
                let response = try await session.stream(
                    Request<Data>.get("/drip", query: ["size": 100, "interval": 100])
                )
                #expect(response.status == .ok)
            }
            await eventually("the pool empties") { await session.pool.isEmpty }
            await eventually("the server sees the connection close") { server.aborts("/drip") == 1 }
        }
    }

    @Test func theDeadlineReachesTheBody() async throws {
        try await withServerSession { session, _ in
            // The body takes 10 s; the head comes at once, but 2 s leave it room on a loaded machine (400 ms did not,
            // once, when every suite started at the same moment in CI).
            let response = try await session.stream(
                Request<Data>.get("/drip", query: ["size": 100, "interval": 100]).timeout(.seconds(2))
            )
            let error = await courierError { for try await _ in response.body {} }
            #expect(error?.code == .timeout)
            await eventually("the pool empties") { await session.pool.isEmpty }
        }
    }

    @Test func theRetryRuleAndTheCredentialRefreshApplyBeforeTheHead() async throws {
        try await withServerSession({ $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(5)) }) {
            session,
            server in
            let retried = try await session.stream(Request<Data>.get("/flaky/stream?failures=2"))
            #expect(retried.status == .ok && server.hits("/flaky/stream") == 3)
            for try await _ in retried.body {}

            struct Refreshing: Authenticator {
                func apply(_ credential: String, to request: inout HTTPRequest) {
                    request.headerFields[.authorization] = "Bearer \(credential)"
                }
                func refresh(_ credential: String) async throws -> String { "token-0" }
            }
            let signed = try await session.stream(
                Request<Data>.get("/auth/resource")
                    .authentication(Authentication(Refreshing(), credential: "expired"))
            )
            #expect(signed.status == .ok)
            for try await _ in signed.body {}
            await eventually("the pool empties") { await session.pool.isEmpty }
        }
    }

    @Test func aTransferTakesNoSlotFromShortRequests() async throws {
        try await withServerSession({ $0.scheduling.maxConcurrentRequests = 1 }) { session, _ in
            let response = try await session.stream(Request<Data>.get("/drip", query: ["size": 100, "interval": 100]))
            let short = try await session.send(Request<Data>.get("/small"))
            #expect(short.status == .ok)
            _ = response
        }
    }

    /// Suspended by its id, a stream gives its reader no chunk until it is resumed; then the body goes on whole.
    @Test func aStreamSuspendedByItsIdGivesNothingUntilResumed() async throws {
        try await withServerSession { session, _ in
            let response = try await session.stream(
                Request<Data>.get("/drip", query: ["size": 4, "interval": 20]).tag("held")
            )
            var iterator = response.body.makeAsyncIterator()
            var received = try await iterator.next()?.readableBytes ?? 0
            let id = try #require(await session.pool.snapshot().first?.id)
            #expect(await session.pool.suspend(id))
            #expect(await session.pool.snapshot().first?.isSuspended == true)
            let gotMore = Locked(false)
            let reader = Task { [iterator] in
                var iterator = iterator
                var bytes = 0
                while let chunk = try await iterator.next() {
                    gotMore.withLock { $0 = true }
                    bytes += chunk.readableBytes
                }
                return bytes
            }
            try await Task.sleep(for: .milliseconds(300))  // the server has sent everything by now
            #expect(!gotMore.withLock { $0 }, "a suspended stream gave its reader a chunk")
            #expect(await session.pool.resume(id))
            received += try await reader.value
            #expect(received == 4)
            await eventually("the pool empties") { await session.pool.isEmpty }
        }
    }
}
