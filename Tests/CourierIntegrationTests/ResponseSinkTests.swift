import Courier
import CourierTestSupport
import CourierTesting
import CourierURLSession
import Foundation
import HTTPTypes
import NIOCore
import NIOPosix
import Testing

/// Keeps what a sink was handed. Written by one exchange at a time, one call after another (as ``ResponseSink``
/// promises); the lock only lets the test read it from its own task.
private final class KeepingSink: ResponseSink {
    struct Kept {
        var heads: [HTTPResponse.Status] = []
        var body = Data()
        var writes = 0
        var writesOnALoop = 0
    }
    private let kept = Locked(Kept())
    /// Throws this error at the write that passes `failAfter` bytes.
    private let failure: (any Error & Sendable)?
    private let failAfter: Int

    init(failing failure: (any Error & Sendable)? = nil, after failAfter: Int = 0) {
        self.failure = failure
        self.failAfter = failAfter
    }

    var all: Kept { kept.withLock { $0 } }

    func head(_ response: StreamedResponse) throws {
        kept.withLock { $0.heads.append(response.status) }
    }

    func write(_ chunk: ByteBuffer) throws {
        let onLoop = MultiThreadedEventLoopGroup.currentEventLoop != nil
        let total = kept.withLock { kept in
            kept.body.append(contentsOf: chunk.readableBytesView)
            kept.writes += 1
            if onLoop { kept.writesOnALoop += 1 }
            return kept.body.count
        }
        if let failure, total > failAfter { throw failure }
    }
}

private struct DiskFull: Error, Equatable {}

/// `session.stream(_:into:)`: the delivered answer's body goes to a sink where it arrives, on the event loop with
/// AsyncHTTPClient, in the caller's task with another transport, and only the delivered answer's.
@Suite("Bodies handed to a sink", .timeLimit(.minutes(1)))
struct ResponseSinkTests {
    @Test func theBodyGoesToTheSinkOnTheEventLoopWholeAndInOrder() async throws {
        let monitor = RecordingMonitor()
        try await withServerSession({ $0.monitors = [monitor] }) { session, _ in
            let whole = try await session.send(Request<Data>.get("/file/1000000")).body
            let sink = KeepingSink()
            let head = try await session.stream(Request<Data>.get("/file/1000000"), into: sink)
            #expect(head.status == .ok)
            #expect(head.headers[.contentLength] == "1000000")
            let kept = sink.all
            #expect(kept.heads == [.ok])
            #expect(kept.body == whole)
            #expect(kept.writes > 1 && kept.writesOnALoop == kept.writes, "every chunk was written on the loop")
            await eventually("the pool empties") { await session.pool.isEmpty }
            #expect(monitor.all.filter { $0.hasPrefix("didComplete") } == ["didComplete ok", "didComplete ok"])
        }
    }

    @Test func anotherTransportHandsTheBodyOverAsItIsRead() async throws {
        try await withServerSession(transport: URLSessionTransport()) { session, _ in
            let sink = KeepingSink()
            try await session.stream(Request<Data>.get("/small"), into: sink)
            let kept = sink.all
            #expect(kept.heads == [.ok] && kept.body.count == 1024)
            #expect(kept.writesOnALoop == 0)
        }
    }

    /// A redirect's body and a failure the retry rule replaces never reach the sink: only the delivered answer does.
    @Test func onlyTheDeliveredAnswerReachesTheSink() async throws {
        try await withServerSession({
            $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1))
        }) { session, _ in
            let retried = KeepingSink()
            try await session.stream(Request<Data>.get("/flaky/sink?failures=2"), into: retried)
            #expect(retried.all.heads == [.ok])
            #expect(String(decoding: retried.all.body, as: UTF8.self) == "ok after 2 failures")
            let redirected = KeepingSink()
            let head = try await session.stream(Request<Data>.get("/redirect/2"), into: redirected)
            #expect(head.url.path() == "/redirect/0")
            #expect(redirected.all.heads == [.ok])
            #expect(try JSONSerialization.jsonObject(with: redirected.all.body) is [String: Any])
        }
    }

    /// Bytes that arrived before the connection broke reach the sink before the failure does, even when they all came
    /// before the sink was handed the body (a resumed download keeps them).
    @Test func aBodyCutShortReachesTheSinkUpToTheCut() async throws {
        try await withServerSession { session, _ in
            let sink = KeepingSink()
            let error = await courierError {
                try await session.stream(Request<Data>.get("/file/1000000?cut=70000"), into: sink)
            }
            #expect(error?.code == .connectionClosed)
            #expect(sink.all.body == ServerFiles.data(count: 70_000))
        }
    }

    /// What the sink throws stops the exchange and comes back as it was thrown; the session goes on serving.
    @Test func aSinkThatThrowsStopsTheCallWithItsOwnError() async throws {
        let monitor = RecordingMonitor()
        try await withServerSession({ $0.monitors = [monitor] }) { session, _ in
            let sink = KeepingSink(failing: DiskFull(), after: 10_000)
            await #expect(throws: DiskFull.self) {
                try await session.stream(Request<Data>.get("/file/1000000"), into: sink)
            }
            #expect(sink.all.body.count < 1_000_000)
            await eventually("the pool empties") { await session.pool.isEmpty }
            await eventually("the monitors hear a failure") {
                monitor.all.filter { $0.hasPrefix("didComplete") }.count == 1
            }
            #expect(monitor.all.filter { $0.hasPrefix("didComplete") } != ["didComplete ok"])
            let after = KeepingSink()
            try await session.stream(Request<Data>.get("/small"), into: after)
            #expect(after.all.body.count == 1024)
        }
    }

    /// Cancelling the caller's task stops a body going to a sink (a paused download is such a task).
    @Test func cancellingTheCallersTaskStopsABodyGoingToASink() async throws {
        try await withServerSession { session, _ in
            let sink = KeepingSink()
            let delivered = Task {
                try await session.stream(
                    Request<Data>.get("/drip", query: ["size": 100, "interval": 50]),
                    into: sink
                )
            }
            await eventually("the first chunk arrives") { sink.all.writes > 0 }
            delivered.cancel()
            let error = await courierError { _ = try await delivered.value }
            #expect(error?.code == .cancelled)
            #expect(sink.all.writes < 100)
            await eventually("the pool empties") { await session.pool.isEmpty }
        }
    }

    /// Suspended by its id, a body going to a sink gives it nothing more (past the chunk already on its way) until it
    /// is resumed, with either transport; then the body goes on whole.
    @Test(arguments: [false, true])
    func aSuspendedCallWritesNothingToItsSinkUntilResumed(urlSession: Bool) async throws {
        try await withServerSession(transport: urlSession ? URLSessionTransport() : nil) { session, _ in
            let sink = KeepingSink()
            let delivered = Task {
                try await session.stream(Request<Data>.get("/drip", query: ["size": 20, "interval": 20]), into: sink)
            }
            await eventually("the first chunk arrives") { sink.all.writes > 0 }
            let id = try #require(await session.pool.snapshot().first?.id)
            #expect(await session.pool.suspend(id))
            try await Task.sleep(for: .milliseconds(100))  // the chunk already asked for lands
            let held = sink.all.body.count
            try await Task.sleep(for: .milliseconds(300))  // unsuspended, the server would send 15 bytes more
            #expect(sink.all.body.count == held, "a suspended call wrote to its sink")
            #expect(held < 20)
            #expect(await session.pool.resume(id))
            _ = try await delivered.value
            #expect(sink.all.body.count == 20)
        }
    }

    /// The pool's controls reach a body going to a sink, as they reach one read as a sequence.
    @Test func cancellingByTagStopsABodyGoingToASink() async throws {
        try await withServerSession { session, _ in
            let sink = KeepingSink()
            let delivered = Task {
                try await session.stream(
                    Request<Data>.get("/drip", query: ["size": 100, "interval": 50]).tag("sunk"),
                    into: sink
                )
            }
            await eventually("the first chunk arrives") { sink.all.writes > 0 }
            #expect(await session.pool.cancelAll(tag: "sunk") == 1)
            let error = await courierError { _ = try await delivered.value }
            #expect(error?.code == .cancelled)
            await eventually("the pool empties") { await session.pool.isEmpty }
        }
    }
}
