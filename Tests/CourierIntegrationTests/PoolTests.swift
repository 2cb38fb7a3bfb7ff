import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import NIOCore
import Testing

/// Collects the pool's events in the background.
final class EventLog: Sendable {
    private final class Lines: Sendable {
        let lines = Locked<[String]>([])
    }

    private let lines = Lines()
    private let task: Task<Void, Never>

    init(_ pool: RequestPool) {
        let stream = pool.events
        let lines = self.lines
        task = Task {
            for await event in stream {
                let name =
                    switch event {
                    case .started: "started"
                    case .finished(_, let status): "finished \(status.code)"
                    case .failed(_, let error): "failed \(error.code)"
                    case .cancelled: "cancelled"
                    case .suspended: "suspended"
                    case .resumed: "resumed"
                    }
                lines.lines.withLock { $0.append("\(name) \(event.request.tag ?? "-")") }
            }
        }
    }

    var all: [String] { lines.lines.withLock { $0 } }
    func stop() { task.cancel() }
}

@Suite("Request pool", .timeLimit(.minutes(1)))
struct PoolTests {
    @Test func snapshotAndLogShowRunningAndWaitingRequests() async throws {
        try await withServerSession({ $0.scheduling.maxConcurrentRequests = 1 }) { session, server in
            let tasks = (0..<3).map { n in
                Task {
                    try await session.send(
                        Request<Data>.get("/delay/400", query: ["n": .int(n), "token": "s3cret"]).tag("t\(n)")
                    )
                }
            }
            await eventually("three requests are in the pool") { await session.pool.count == 3 }
            let snapshot = await session.pool.snapshot()
            #expect(snapshot.filter { $0.state == .running }.count == 1)
            #expect(snapshot.filter { $0.state == .waiting }.count == 2)
            #expect(Set(snapshot.compactMap(\.tag)) == ["t0", "t1", "t2"])
            #expect(snapshot.allSatisfy { $0.url.absoluteString == server.url("/delay/400").absoluteString })
            let log = await session.pool.log()
            #expect(log.hasPrefix("3 in flight: 1 running, 2 waiting"))
            #expect(log.contains("token=<redacted>") && !log.contains("s3cret"))
            for task in tasks { _ = try await task.value }
            #expect(await session.pool.isEmpty)
        }
    }

    @Test func cancellingAWaitingRequestSendsNothing() async throws {
        try await withServerSession({ $0.scheduling.maxConcurrentRequests = 1 }) { session, server in
            let first = Task { try await session.send(Request<Data>.get("/delay/300").tag("first")) }
            await eventually("the first request runs") { server.hits("/delay/300") == 1 }
            let second = Task { try await session.send(Request<Data>.get("/echo").tag("second")) }
            await eventually("the second request waits") { await session.pool.count == 2 }
            let waiting = try #require(await session.pool.snapshot().first { $0.tag == "second" })
            #expect(waiting.state == .waiting)
            #expect(await session.pool.cancel(waiting.id))
            guard case .failure(let error) = await second.result else {
                Issue.record("the waiting request ran")
                return
            }
            #expect((error as? CourierError)?.code == .cancelled)
            _ = try await first.value
            #expect(server.hits("/echo") == 0)
        }
    }

    @Test func aSuspendedWaitingRequestLetsOthersPassUntilResumed() async throws {
        try await withServerSession({ $0.scheduling.maxConcurrentRequests = 1 }) { session, server in
            let first = Task { try await session.send(Request<Data>.get("/delay/200")) }
            await eventually("the first request runs") { server.hits("/delay/200") == 1 }
            let held = Task { try await session.send(Request<Data>.get("/echo").tag("held")) }
            await eventually("the second request waits") { await session.pool.count == 2 }
            let id = try #require(await session.pool.snapshot().first { $0.tag == "held" }?.id)
            #expect(await session.pool.suspend(id))
            #expect(await session.pool.suspend(id) == false, "already suspended")
            let next = Task { try await session.send(Request<Data>.get("/small").tag("next")) }
            _ = try await first.value
            _ = try await next.value  // the free slot went past the suspended request
            #expect(server.hits("/echo") == 0)
            let waiting = await session.pool.snapshot()
            #expect(
                waiting.map(\.tag) == ["held"] && waiting.first?.isSuspended == true && waiting.first?.state == .waiting
            )
            #expect(await session.pool.log().contains("(suspended)"))
            #expect(await session.pool.resume(id))
            #expect(try await held.value.status.code == 200)
            #expect(await session.pool.resume(id) == false, "no longer in flight")
        }
    }

    /// RBEFireworks' accessories hear will-cancel, will-suspend and did-resume, and the pool's events say suspended
    /// and resumed.
    @Test func accessoriesAndEventsHearSuspendResumeAndCancel() async throws {
        final class Recorder: RequestAccessory {
            let heard = Locked<[String]>([])
            func requestWillSuspend(_ request: PreparedRequest) { heard.withLock { $0.append("will suspend") } }
            func requestDidResume(_ request: PreparedRequest) { heard.withLock { $0.append("did resume") } }
            func requestWillCancel(_ request: PreparedRequest) { heard.withLock { $0.append("will cancel") } }
        }
        try await withServerSession { session, _ in
            let log = EventLog(session.pool)
            let recorder = Recorder()
            var events = session.pool.events.makeAsyncIterator()
            let task = Task { try await session.send(Request<Data>.get("/delay/5000").tag("held").accessory(recorder)) }
            let id = try #require(await firstStarted(&events))
            #expect(await session.pool.suspend(id))
            #expect(await session.pool.resume(id))
            #expect(await session.pool.cancel(id))
            _ = await task.result
            #expect(recorder.heard.withLock { $0 } == ["will suspend", "did resume", "will cancel"])
            await eventually("the events arrive") { log.all.count == 4 }
            #expect(log.all == ["started held", "suspended held", "resumed held", "cancelled held"])
            log.stop()
        }
    }

    @Test func aSuspendedRunningRequestStopsReadingUntilResumed() async throws {
        let size = 16_000_000  // 1.3 s at the server's rate
        try await withServerSession { session, server in
            var events = session.pool.events.makeAsyncIterator()
            let finished = Locked(false)
            let task = Task {
                defer { finished.withLock { $0 = true } }
                return try await session.send(Request<Data>.get("/file/\(size)?rate=12000000&key=held"))
            }
            let id = try #require(await firstStarted(&events))
            #expect(await session.pool.suspend(id))
            // The server starts sending, the sockets' buffers fill (several MB on loopback), then the server is held
            // back: wait until the count has started and settled (unsuspended, it grows 3.6 MB in 300 ms), however
            // slowly this loaded machine gets there.
            var sentBefore = 0
            while true {
                try await Task.sleep(for: .milliseconds(300))
                let sent = server.counter("file-bytes:held")
                if sent > 0 && sent == sentBefore { break }
                sentBefore = sent
            }
            try await Task.sleep(for: .milliseconds(1000))
            let sentAfter = server.counter("file-bytes:held")
            #expect(
                sentAfter - sentBefore <= 256 * 1024,
                "\(sentAfter - sentBefore) bytes went out in a second of suspension"
            )
            #expect(sentAfter < size && !finished.withLock { $0 })
            #expect(await session.pool.resume(id))
            let response = try await task.value
            #expect(response.body.count == size)
        }
    }

    /// The id of the next request the pool reports started.
    func firstStarted(_ events: inout AsyncStream<PoolEvent>.Iterator) async -> RequestID? {
        while let event = await events.next() {
            if case .started(let request) = event { return request.id }
        }
        return nil
    }

    @Test func aSuspendedUploadStopsSendingUntilResumed() async throws {
        let chunks = SlowChunks(count: 60, size: 16 * 1024, interval: .milliseconds(10))
        try await withServerSession { session, _ in
            var events = session.pool.events.makeAsyncIterator()
            let task = Task {
                try await session.send(Request<Echo>.post("/echo", body: .stream(chunks, length: chunks.length)))
            }
            let id = try #require(await firstStarted(&events))
            #expect(await session.pool.suspend(id))
            // The chunk in flight may still be taken: wait until the count settles (unsuspended, a chunk is taken
            // every 10 ms, so it would not), however slowly this loaded machine gets there.
            var taken = -1
            while chunks.taken != taken {
                taken = chunks.taken
                try await Task.sleep(for: .milliseconds(300))
            }
            #expect(taken < chunks.count, "the body was sent whole while suspended")
            try await Task.sleep(for: .milliseconds(400))
            #expect(chunks.taken == taken, "no chunk was taken while suspended (\(taken) of \(chunks.count))")
            #expect(await session.pool.resume(id))
            let echo = try await task.value.value
            #expect(echo.bodyLength == Int(chunks.length) && chunks.taken == chunks.count)
        }
    }

    @Test func drainCancelsWaitingRequestsAndLetsRunningOnesFinish() async throws {
        try await withServerSession({ $0.scheduling.maxConcurrentRequests = 1 }) { session, server in
            #expect(await session.pool.drain() == 0, "an empty pool drains at once")
            let running = Task { try await session.send(Request<Data>.get("/delay/300")) }
            await eventually("the first request runs") { server.hits("/delay/300") == 1 }
            let waiting = (0..<2).map { n in
                Task { try await session.send(Request<Data>.get("/echo", query: ["n": .int(n)])) }
            }
            await eventually("two requests wait") { await session.pool.count == 3 }
            #expect(await session.pool.drain() == 2)
            #expect(await session.pool.isEmpty, "drain returns once the running request has ended")
            let finished = try await running.value
            #expect(finished.status.code == 200)
            for task in waiting {
                guard case .failure(let error) = await task.result else {
                    Issue.record("a waiting request ran")
                    continue
                }
                #expect((error as? CourierError)?.code == .cancelled)
            }
            #expect(server.hits("/echo") == 0)
            let after = try await session.send(Request<Data>.get("/echo"))
            #expect(after.status.code == 200, "the pool takes requests after a drain")
        }
    }

    /// Starts one long request per label, runs `cancel`, and returns which were cancelled.
    func cancelled(
        by cancel: @escaping @Sendable (RequestPool, TestServer) async -> Int,
        expecting count: Int
    ) async throws -> Set<String> {
        try await withServerSession { session, server in
            let requests: [(String, Request<Data>)] = [
                ("a1", Request<Data>.get("/delay/1500", query: ["a": 1]).tag("alpha")),
                ("a2", Request<Data>.get("/delay/1500", query: ["a": 2]).tag("alpha")),
                ("b", Request<Data>.get("/delay/1499", query: ["a": 1]).tag("beta")),
                ("p", Request<Data>.delete("/delay/1500", query: ["a": 1]).tag("gamma")),
            ]
            let tasks = requests.map { label, request in
                (
                    label,
                    Task { () -> Result<Response<Data>, any Error> in
                        do { return .success(try await session.send(request)) } catch { return .failure(error) }
                    }
                )
            }
            await eventually("all requests run") { server.totalHits == requests.count }
            #expect(await cancel(session.pool, server) == count)
            var cancelled: Set<String> = []
            for (label, task) in tasks {
                if case .failure(let error) = await task.value, (error as? CourierError)?.code == .cancelled {
                    cancelled.insert(label)
                }
            }
            // Each cancelled request left the server before it answered: cancelled promptly, shown by an event
            // rather than a clock.
            await eventually("the server sees every cancelled request go") {
                server.aborts("/delay/1500") + server.aborts("/delay/1499") == cancelled.count
            }
            #expect(await session.pool.isEmpty)
            return cancelled
        }
    }

    @Test func cancelEveryVariant() async throws {
        #expect(
            try await cancelled(
                by: { pool, server in await pool.cancelAll(url: server.url("/delay/1500?x=9")) },
                expecting: 3
            )
                == ["a1", "a2", "p"]
        )
        #expect(
            try await cancelled(
                by: { pool, server in
                    await pool.cancel(method: .get, url: server.url("/delay/1500"), parameters: ["a": 1])
                },
                expecting: 1
            ) == ["a1"]
        )
        #expect(
            try await cancelled(
                by: { pool, server in await pool.cancel(method: .get, url: server.url("/delay/1500?a=2")) },
                expecting: 1
            ) == ["a2"]
        )
        #expect(
            try await cancelled(by: { pool, _ in await pool.cancelAll(tag: "alpha") }, expecting: 2) == ["a1", "a2"]
        )
        #expect(try await cancelled(by: { pool, _ in await pool.cancelAll() }, expecting: 4) == ["a1", "a2", "b", "p"])
    }

    @Test func eventsFollowRequestsOthersStarted() async throws {
        try await withServerSession { session, _ in
            let log = EventLog(session.pool)
            _ = try await session.send(Request<Data>.get("/small").tag("ok"))
            _ = try? await session.send(Request<Data>.get("/status/500").tag("bad"))
            let slow = Task { try await session.send(Request<Data>.get("/delay/3000").tag("slow")) }
            await eventually("the slow request starts") { log.all.contains("started slow") }
            slow.cancel()
            _ = await slow.result
            await eventually("all events arrive") { log.all.count == 6 }
            // The pool tracks the exchange: a 500 is an answer, finished there; the validator that rejects it runs
            // after the request left the pool.
            #expect(
                log.all == [
                    "started ok", "finished 200 ok", "started bad", "finished 500 bad", "started slow",
                    "cancelled slow",
                ]
            )
            log.stop()
        }
    }

    @Test func suspendHoldsNewRequestsAndResumeSendsThem() async throws {
        try await withServerSession { session, server in
            await session.pool.suspend()
            #expect(await session.pool.isSuspended)
            let task = Task { try await session.send(Request<Data>.get("/small")) }
            await eventually("the request waits") { await session.pool.snapshot().first?.state == .waiting }
            try await Task.sleep(for: .milliseconds(100))
            #expect(server.hits("/small") == 0)
            await session.pool.resume()
            #expect(try await task.value.status == .ok)
            #expect(server.hits("/small") == 1)
        }
    }

    @Test func prioritiesOrderWaitingRequests() async throws {
        try await withServerSession({ $0.scheduling.maxConcurrentRequests = 1 }) { session, server in
            let log = EventLog(session.pool)
            // The blocker holds the only slot until every request waits; cancelling it then frees the slot at a
            // moment the test chooses, so a slow machine cannot start a request before the rest are queued.
            let blocker = Task { try await session.send(Request<Data>.get("/delay/5000").tag("blocker")) }
            await eventually("the blocker runs") { server.hits("/delay/5000") == 1 }
            var tasks: [Task<Response<Data>, any Error>] = []
            for priority in [RequestPriority.low, .normal, .high, .normal] {
                let count = await session.pool.count
                tasks.append(
                    Task {
                        try await session.send(
                            Request<Data>.get("/echo", query: ["n": .int(count)]).priority(priority).tag("\(priority)")
                        )
                    }
                )
                await eventually("the request waits") { await session.pool.count == count + 1 }
            }
            #expect(await session.pool.cancelAll(tag: "blocker") == 1)
            await #expect(throws: CourierError.self) { _ = try await blocker.value }
            for task in tasks { _ = try await task.value }
            let starts = log.all.filter { $0.hasPrefix("started") }.map {
                $0.replacingOccurrences(of: "started ", with: "")
            }
            #expect(starts == ["blocker", "high", "normal", "normal", "low"])
            log.stop()
        }
    }

    @Test func perHostLimitHoldsTheRestBack() async throws {
        try await withServerSession({ $0.scheduling.maxRequestsPerHost = 2 }) { session, server in
            let tasks = (0..<4).map { n in
                Task { try await session.send(Request<Data>.get("/delay/300", query: ["n": .int(n)])) }
            }
            await eventually("two run and two wait") {
                let snapshot = await session.pool.snapshot()
                return snapshot.count == 4 && snapshot.filter { $0.state == .running }.count == 2
            }
            #expect(server.hits("/delay/300") <= 2)
            for task in tasks { _ = try await task.value }
            #expect(server.hits("/delay/300") == 4)
        }
    }

    @Test func rateLimitThatFailsFastSaysTooFrequent() async throws {
        let rule = RateLimitRule(pathPrefix: "/small", limit: .minimumInterval(.seconds(30)), whenLimited: .fail)
        try await withServerSession({
            $0.scheduling.rateLimits = [rule]
            $0.userMessages.tooFrequent = "Slow down."
        }) { session, server in
            _ = try await session.send(Request<Data>.get("/small"))
            let error = await courierError { _ = try await session.send(Request<Data>.get("/small")) }
            #expect(error?.code == .tooFrequent)
            #expect(error?.userMessage == "Slow down.")
            // the wait the limit asks for, in whole seconds: about the 30 s interval, never 0
            let wait = error?.retryAfter.flatMap { Int($0) }
            #expect(wait.map { (25...30).contains($0) } == true, "Retry-After \(String(describing: error?.retryAfter))")
            #expect(server.hits("/small") == 1)
            _ = try await session.send(Request<Data>.get("/echo"))  // another endpoint is not limited
        }
    }

    @Test func rateLimitThatWaitsSpacesRequestsOut() async throws {
        let rule = RateLimitRule(pathPrefix: "/echo", limit: .minimumInterval(.milliseconds(150)))
        try await withServerSession({ $0.scheduling.rateLimits = [rule] }) { session, server in
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<3 {
                    group.addTask { _ = try await session.send(Request<Data>.get("/echo", query: ["n": .int(n)])) }
                }
                try await group.waitForAll()
            }
            #expect(start.duration(to: .now) >= .milliseconds(300))
            #expect(server.hits("/echo") == 3)
        }
    }

    @Test func aThousandRequestsWithRandomCancellationLeaveThePoolEmpty() async throws {
        try await withServerSession({ $0.scheduling.maxConcurrentRequests = 32 }) { session, _ in
            await withTaskGroup(of: Void.self) { group in
                for n in 0..<1000 {
                    let path = n % 3 == 0 ? "/small" : "/delay/\(n % 20)"
                    let task = Task { try await session.send(Request<Data>.get(path, query: ["n": .int(n % 7)])) }
                    group.addTask {
                        if Int.random(in: 0..<3) == 0 {
                            try? await Task.sleep(for: .milliseconds(Int.random(in: 0..<20)))
                            task.cancel()
                        }
                        _ = await task.result
                    }
                }
            }
            #expect(await session.pool.isEmpty)
            #expect(await session.pool.snapshot().isEmpty)
            await eventually("no task is left behind") { await session.pool.taskCount == 0 }
        }
    }
}

/// `count` chunks of zeros, one every `interval`, counting how many have been taken.
struct SlowChunks: AsyncSequence, Sendable {
    let count: Int
    let size: Int
    let interval: Duration
    private let takenCount = Locked(0)

    init(count: Int, size: Int, interval: Duration) {
        self.count = count
        self.size = size
        self.interval = interval
    }

    var length: Int64 { Int64(count * size) }
    var taken: Int { takenCount.withLock { $0 } }

    struct AsyncIterator: AsyncIteratorProtocol {
        let chunks: SlowChunks

        mutating func next() async throws -> ByteBuffer? {
            try await Task.sleep(for: chunks.interval)
            let index = chunks.takenCount.withLock { taken in
                defer { if taken < chunks.count { taken += 1 } }
                return taken
            }
            guard index < chunks.count else { return nil }
            return ByteBuffer(repeating: 0, count: chunks.size)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: self) }
}
