import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("Coalescing", .timeLimit(.minutes(1)))
struct CoalescingTests {
    /// Sends `count` copies of `request` at once and returns their results.
    func sendAtOnce(_ session: Session, _ requests: [Request<Data>]) async -> [Result<Response<Data>, any Error>] {
        await withTaskGroup(of: (Int, Result<Response<Data>, any Error>).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask {
                    do { return (index, .success(try await session.send(request))) } catch {
                        return (index, .failure(error))
                    }
                }
            }
            var results = [Result<Response<Data>, any Error>?](repeating: nil, count: requests.count)
            for await (index, result) in group { results[index] = result }
            return results.compactMap { $0 }
        }
    }

    @Test
    func identicalRequestsInFlightShareOneCall() async throws {
        try await withServerSession { session, server in
            let results = await sendAtOnce(
                session,
                Array(repeating: Request<Data>.get("/delay/300", query: ["q": "1"]), count: 20)
            )
            #expect(results.allSatisfy { (try? $0.get().string) == "waited 300 ms" })
            #expect(server.hits("/delay/300") == 1)
        }
    }

    @Test func optingOutOrDifferingInCredentialsMakesSeparateCalls() async throws {
        try await withServerSession { session, server in
            let plain = Request<Data>.get("/delay/200")
            _ = await sendAtOnce(
                session,
                [
                    plain, plain.withoutCoalescing(), plain.header("Authorization", "Bearer a"),
                    plain.header("Authorization", "Bearer b"), plain.query(["other": 1]),
                ]
            )
            #expect(server.hits("/delay/200") == 5)
        }
    }

    @Test func postsAreNeverShared() async throws {
        try await withServerSession { session, server in
            let post = Request<Data>.post("/echo", body: .text("same"))
            _ = await sendAtOnce(session, [post, post, post])
            #expect(server.hits("/echo") == 3)
        }
    }

    @Test
    func cancellingTheFirstCallerLeavesTheOthersTheirAnswer() async throws {
        try await withServerSession { session, server in
            let request = Request<Data>.get("/delay/400")
            let leader = Task { try await session.send(request) }
            await eventually("the call is in flight") { server.hits("/delay/400") == 1 }
            let tasks = [leader] + (0..<2).map { _ in Task { try await session.send(request) } }
            await eventually("two callers share it") { await session.pool.snapshot().filter(\.isCoalesced).count == 2 }
            tasks[0].cancel()  // the caller whose task runs the call: it goes on for the other two
            guard case .failure(let error) = await tasks[0].result else {
                Issue.record("the cancelled caller got an answer")
                return
            }
            #expect((error as? CourierError)?.code == .cancelled)
            let second = try await tasks[1].value
            let third = try await tasks[2].value
            #expect(second.string == "waited 400 ms" && third.string == "waited 400 ms")
            #expect(server.hits("/delay/400") == 1)
            #expect(server.aborts("/delay/400") == 0)
        }
    }

    /// The pool decides as a request registers whether it leads a call or follows one: a follower takes no slot,
    /// so identical requests join a call whose leader still waits for its slot under a full limit.
    @Test
    func followersTakeNoSlotWhileTheirLeaderWaitsForOne() async throws {
        try await withServerSession({ $0.scheduling.maxConcurrentRequests = 1 }) { session, server in
            let occupier = Task { try await session.send(Request<Data>.get("/delay/600").withoutCoalescing()) }
            await eventually("the slot is taken") { server.hits("/delay/600") == 1 }
            let request = Request<Data>.get("/delay/50")
            let tasks = (0..<3).map { _ in Task { try await session.send(request) } }
            await eventually("two follow, the leader waits") {
                let requests = await session.pool.snapshot().filter { $0.url.path() == "/delay/50" }
                return requests.filter(\.isCoalesced).count == 2 && requests.filter { $0.state == .waiting }.count == 1
            }
            for task in tasks { #expect(try await task.value.string == "waited 50 ms") }
            _ = try await occupier.value
            #expect(server.hits("/delay/50") == 1)
        }
    }

    /// A leader that ends before its call runs (cancelled, or past its deadline, while it waits for its slot)
    /// hands the call to a request waiting for it, and leaves no call behind for later identical requests to wait on.
    @Test
    func aLeaderThatEndsBeforeItsCallRunsHandsItOnOrLeavesNothing() async throws {
        try await withServerSession({ $0.scheduling.maxConcurrentRequests = 1 }) { session, server in
            let occupier = Task { try await session.send(Request<Data>.get("/delay/800").withoutCoalescing()) }
            await eventually("the slot is taken") { server.hits("/delay/800") == 1 }
            let request = Request<Data>.get("/delay/20")
            let alone = Task { try await session.send(request) }
            await eventually("it waits for the slot") { await session.pool.count == 2 }
            alone.cancel()
            #expect(await courierError { _ = try await alone.value }?.code == .cancelled)

            let leader = Task { try await session.send(request.timeout(.milliseconds(200))) }
            await eventually("it waits for the slot") { await session.pool.count == 2 }
            let follower = Task { try await session.send(request.timeout(.seconds(10))) }
            await eventually("it follows") { await session.pool.snapshot().contains(where: \.isCoalesced) }
            #expect(await courierError { _ = try await leader.value }?.code == .timeout)
            #expect(try await follower.value.string == "waited 20 ms", "the call went on for the follower")
            _ = try await occupier.value
            #expect(try await session.send(request.timeout(.seconds(10))).string == "waited 20 ms")
            #expect(server.hits("/delay/20") == 2)
            await eventually("the pool empties") { await session.pool.isEmpty }
        }
    }

    /// A request that retries gives back the slot its first attempt had before it waits to try again: under a limit
    /// of one, another request runs during that wait.
    @Test func aRetryWaitsWithoutTheFirstAttemptsSlot() async throws {
        try await withServerSession({ $0.scheduling.maxConcurrentRequests = 1 }) { session, server in
            let retried = Task {
                // Retry-After: 2 makes the wait two seconds, not a random backoff.
                try await session.send(
                    Request<String>.get("/flaky/slot?failures=1&retry-after=2").retry(RetryPolicy(maxAttempts: 2))
                )
            }
            await eventually("the first attempt failed") { server.hits("/flaky/slot") == 1 }
            let start = ContinuousClock.now
            _ = try await session.send(Request<Data>.get("/small"))
            #expect(start.duration(to: .now) < .milliseconds(1500), "it ran during the retry's wait")
            #expect(try await retried.value.value == "ok after 1 failures")
        }
    }

    /// A leader whose first attempt is refused and retried hands that answer to the requests that joined it as the
    /// attempt ends, not after its own retry: each of them decides for itself what to do with it.
    @Test func aRetriedLeaderHandsItsFirstAnswerToItsFollowersAtOnce() async throws {
        try await withServerSession { session, server in
            let path = "/flaky/handover?failures=1&retry-after=2&delay=300"
            let leader = Task { try await session.send(Request<String>.get(path).retry(RetryPolicy(maxAttempts: 2))) }
            await eventually("the call is in flight") { server.hits("/flaky/handover") == 1 }
            let start = ContinuousClock.now
            let follower = Task { try await session.send(Request<String>.get(path)) }
            await eventually("it follows") { await session.pool.snapshot().contains(where: \.isCoalesced) }
            let error = await courierError { _ = try await follower.value }
            #expect(error?.status == .serviceUnavailable, "the first attempt's answer")
            #expect(start.duration(to: .now) < .milliseconds(1500), "before the leader's retry")
            let retried = try await leader.value
            #expect(retried.value == "ok after 1 failures")
            #expect(server.hits("/flaky/handover") == 2)
        }
    }

    @Test func cancellingEveryCallerCancelsTheCall() async throws {
        try await withServerSession { session, server in
            let request = Request<Data>.get("/delay/2000")
            let tasks = (0..<3).map { _ in Task { try await session.send(request) } }
            await eventually("the call is in flight") { await session.pool.snapshot().filter(\.isCoalesced).count == 2 }
            // The call reaches the server: a cancellation before that would stop it before it is sent.
            await eventually("the server has the call") { server.hits("/delay/2000") == 1 }
            for task in tasks { task.cancel() }
            for task in tasks {
                guard case .failure(let error) = await task.result else {
                    Issue.record("a caller got an answer")
                    continue
                }
                #expect((error as? CourierError)?.code == .cancelled)
            }
            await eventually("the server sees the connection close", within: .seconds(1)) {
                server.aborts("/delay/2000") == 1
            }
            #expect(server.hits("/delay/2000") == 1)
        }
    }
}

@Suite("Batch and chain", .timeLimit(.minutes(1)))
struct BatchAndChainTests {
    final class Recorder: BatchPlugin {
        let calls = Locked<[String]>([])
        func willStart(total: Int) { calls.withLock { $0.append("willStart \(total)") } }
        func didFinish(_ progress: BatchProgress) {
            calls.withLock { $0.append("didFinish \(progress.completed)/\(progress.failed)") }
        }
    }

    /// HLNetworking's and RBEFireworks' mixed batches: each answer keeps its own type, no common one.
    @Test func aBatchOfDifferentTypesReturnsEachResponseTyped() async throws {
        struct User: Decodable, Sendable {
            var id: Int
            var name: String
        }
        try await withServerSession { session, server in
            let (user, text, bytes) = try await session.batch(
                Request<User>.get("/users/7"),
                Request<String>.get("/status/200"),
                Request<Data>.get("/small")
            )
            #expect(user.value.id == 7 && user.value.name == "user 7")
            #expect(text.value == "status 200")
            #expect(bytes.body == ServerFiles.smallData)

            let error = await courierError {
                _ = try await session.batch(Request<User>.get("/users/8"), Request<String>.get("/status/404"))
            }
            #expect(error?.code == .batchFailed && error?.step == 1 && error?.status?.code == 404)
            // Fail-fast: the 404 may cancel /users/8 before it leaves, on a loaded machine; never is it sent twice.
            #expect(server.hits("/users/8") <= 1)
        }
    }

    /// A mixed batch has what a `Batch` has: every result (collect-all by default, the seeds' default), a
    /// concurrency bound, progress and a cancel handle.
    @Test func aMixedBatchCollectsEveryResultWithinItsBoundAndCanBeCancelled() async throws {
        struct User: Decodable, Sendable {
            var id: Int
            var name: String
        }
        try await withServerSession { session, server in
            let batch = MixedBatch(
                Request<User>.get("/users/3"),
                Request<String>.get("/status/404"),
                Request<Data>.get("/delay/100"),
                Request<Data>.get("/delay/101"),
                options: BatchOptions(concurrency: 2)
            )
            #expect(batch.options.mode == .collectAll)
            let watched = Task {
                var seen: [BatchProgress] = []
                for await progress in batch.progress { seen.append(progress) }
                return seen
            }
            let (user, missing, first, second) = try await session.run(batch)
            #expect(try user.get().value.name == "user 3")
            guard case .failure(let error) = missing else {
                Issue.record("a 404 is a failed result")
                return
            }
            #expect(error.status?.code == 404)  // a failure is a result, not the end of the batch
            #expect(try first.get().status == .ok)
            #expect(try second.get().status == .ok)
            let seen = await watched.value
            #expect(
                seen.last
                    == BatchProgress(total: 4, completed: 4, failed: 1, bytesReceived: seen.last?.bytesReceived ?? 0)
            )
            #expect(server.hits("/delay/100") == 1 && server.hits("/delay/101") == 1)

            // Without options it collects every result too: a failure does not cancel the others.
            let plain = MixedBatch(Request<String>.get("/status/404"), Request<Data>.get("/delay/150"))
            #expect(plain.options.mode == .collectAll)
            let (notFound, delayed) = try await session.run(plain)
            #expect((try? notFound.get()) == nil && (try? delayed.get())?.status == .ok)

            // One at a time means one at a time: the pool never holds two of its requests running.
            let bounded = MixedBatch(
                Request<Data>.get("/delay/200"),
                Request<Data>.get("/delay/201"),
                Request<Data>.get("/delay/202"),
                options: BatchOptions(concurrency: 1)
            )
            let boundedRun = Task { try await session.run(bounded) }
            var mostRunning = 0
            let giveUp = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < giveUp {
                let running = await session.pool.snapshot().filter { $0.state == .running }.count
                mostRunning = max(mostRunning, running)
                if running == 0 && server.hits("/delay/202") == 1 { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            _ = try await boundedRun.value
            #expect(mostRunning == 1)

            let slow = MixedBatch(Request<Data>.get("/delay/5000"), Request<String>.get("/delay/5001"))
            let running = Task { try await session.run(slow) }
            await eventually("both are sent") { server.hits("/delay/5000") + server.hits("/delay/5001") == 2 }
            slow.cancel()
            let cancelled = await courierError { _ = try await running.value }
            #expect(cancelled?.code == .cancelled)
        }
    }

    @Test func collectAllKeepsInputOrderAndEveryResult() async throws {
        try await withServerSession { session, _ in
            let paths = ["/delay/150", "/status/404", "/small", "/delay/50", "/status/500", "/echo"]
            let recorder = Recorder()
            let batch = Batch(
                paths.map { Request<Data>.get($0) },
                options: BatchOptions(concurrency: 3, plugins: [recorder])
            )
            let progress = Task {
                var seen: [BatchProgress] = []
                for await value in batch.progress { seen.append(value) }
                return seen
            }
            let outcome = try await session.run(batch)
            #expect(outcome.results.count == 6)
            #expect(outcome.failedIndices == [1, 4])
            for (index, result) in outcome.results.enumerated() {
                if case .success(let response) = result { #expect(response.url.path() == paths[index]) }
            }
            let seen = await progress.value
            #expect(seen.first?.completed == 0)
            let received = outcome.results.reduce(0) { sum, result in
                if case .success(let response) = result { sum + response.body.count } else { sum }
            }
            #expect(received > 1024)
            #expect(
                seen.last == BatchProgress(total: 6, completed: 6, failed: 2, bytesReceived: received),
                "the bodies of the successes, counted once"
            )
            #expect(recorder.calls.withLock { $0 } == ["willStart 6", "didFinish 6/2"])
            let error = #expect(throws: CourierError.self) { _ = try outcome.responses }
            #expect(error?.code == .batchFailed && error?.step == 1)
        }
    }

    @Test func progressOnlyGrowsWhicheverWorkerEndsFirst() async throws {
        try await withServerSession { session, _ in
            let batch = Batch(
                (0..<60).map { Request<Data>.get("/small", query: ["n": .int($0)]) },
                options: BatchOptions(concurrency: 12)
            )
            let progress = Task {
                var seen: [BatchProgress] = []
                for await value in batch.progress { seen.append(value) }
                return seen
            }
            let outcome = try await session.run(batch)
            #expect(outcome.allSucceeded && outcome.results.count == 60)
            let seen = await progress.value
            #expect(
                zip(seen, seen.dropFirst()).allSatisfy {
                    $0.completed <= $1.completed && $0.bytesReceived <= $1.bytesReceived
                }
            )
            #expect(seen.last == BatchProgress(total: 60, completed: 60, failed: 0, bytesReceived: 60 * 1024))
        }
    }

    @Test func failFastCancelsTheRest() async throws {
        try await withServerSession { session, server in
            // The slow members would take a minute: long past any test's patience, so the batch returning at all
            // shows they were cancelled, however loaded the machine (a clock margin is what a loaded machine misses).
            let requests = [
                Request<Data>.get("/delay/60000"), .get("/status/500"), .get("/delay/59999"), .get("/small"),
            ]
            let outcome = try await session.batch(requests, options: BatchOptions(concurrency: 3, mode: .failFast))
            // Each either never reached the server or left it before it answered.
            await eventually("no slow request is answered") {
                server.hits("/delay/60000") + server.hits("/delay/59999") == server.aborts("/delay/60000")
                    + server.aborts("/delay/59999")
            }
            let codes = outcome.results.map { result -> String in
                if case .failure(let error) = result { error.code.rawValue } else { "ok" }
            }
            #expect(codes == ["cancelled", "httpStatus", "cancelled", "cancelled"])
            #expect(server.hits("/small") == 0)
            #expect(await session.pool.isEmpty)
        }
    }

    @Test func concurrencyBoundHolds() async throws {
        try await withServerSession { session, _ in
            let log = EventLog(session.pool)
            let requests = (0..<8).map { Request<Data>.get("/delay/60", query: ["n": .int($0)]) }
            let outcome = try await session.batch(requests, options: BatchOptions(concurrency: 2))
            #expect(outcome.allSucceeded)
            await eventually("all events arrive") { log.all.count == 16 }
            var inFlight = 0
            var peak = 0
            for event in log.all {
                inFlight += event.hasPrefix("started") ? 1 : -1
                peak = max(peak, inFlight)
            }
            #expect(peak == 2)
            log.stop()
        }
    }

    @Test func cancellingTheBatchStopsEverything() async throws {
        try await withServerSession { session, server in
            let batch = Batch(
                (0..<10).map { Request<Data>.get("/delay/3000", query: ["n": .int($0)]) },
                options: BatchOptions(concurrency: 4)
            )
            let run = Task { try await session.run(batch) }
            await eventually("4 requests reach the server") { server.hits("/delay/3000") == 4 }
            batch.cancel()
            let error = await courierError { _ = try await run.value }
            #expect(error?.code == .cancelled)
            // The 4 running requests left the server before it answered; the 6 waiting never reached it.
            await eventually("the server sees the running requests go") { server.aborts("/delay/3000") == 4 }
            #expect(server.hits("/delay/3000") == 4)
            #expect(await session.pool.isEmpty)
        }
    }

    @Test func chainStepsUseThePreviousAnswer() async throws {
        struct Item: Decodable, Sendable {
            var id: Int
            var name: String
        }
        try await withServerSession { session, _ in
            let outcome = try await session.chain { chain in
                let item = try await chain.step("item", Request<Item>.get("/json"))
                let echo = try await chain.step(
                    "details",
                    Request<Echo>.get("/echo", query: ["name": .string(item.value.name)])
                )
                return echo.value.query["name"]
            }
            #expect(outcome.value == "courier")
            #expect(outcome.steps.map(\.name) == ["item", "details"])
            #expect(outcome.steps.allSatisfy { $0.status == .ok })
        }
    }

    @Test func aFailingStepStopsTheChainAndIsNamed() async throws {
        try await withServerSession { session, server in
            let error = await courierError {
                _ = try await session.chain { chain in
                    _ = try await chain.step("first", Request<Data>.get("/small"))
                    _ = try await chain.step("second", Request<Data>.get("/status/404"))
                    _ = try await chain.step("third", Request<Data>.get("/echo"))
                }
            }
            #expect(error?.code == .chainFailed)
            #expect(error?.step == 1 && error?.stepName == "second")
            #expect(error?.status?.code == 404)
            #expect(error?.description.contains("step 1 (second) failed") == true)
            #expect(server.hits("/echo") == 0)
        }
    }

    @Test func aStepCanEndTheChainEarly() async throws {
        try await withServerSession { session, server in
            let outcome = try await session.chain { chain -> String in
                let first = try await chain.step("probe", Request<String>.get("/small"))
                if first.value.count > 10 { return "short-circuited" }
                _ = try await chain.step("never", Request<Data>.get("/echo"))
                return "ran"
            }
            #expect(outcome.value == "short-circuited" && outcome.steps.count == 1)
            #expect(server.hits("/echo") == 0)
        }
    }

    @Test func cancellingAChainStopsItsStepAndTheRest() async throws {
        try await withServerSession { session, server in
            let run = Task {
                try await session.chain { chain in
                    _ = try await chain.step("slow", Request<Data>.get("/delay/3000"))
                    _ = try await chain.step("after", Request<Data>.get("/echo"))
                }
            }
            await eventually("the first step runs") { server.hits("/delay/3000") == 1 }
            run.cancel()
            let error = await courierError { _ = try await run.value }
            #expect(error?.code == .cancelled)
            #expect(server.hits("/echo") == 0)
        }
    }
}
