import Courier
import CourierTestSupport
import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import Testing

/// A ``Transport`` is read in its caller's task, and the session stops it through its ``TransportCancellation``:
/// by the deadline, through the pool and when the caller is cancelled.
@Suite("Transport cancellation", .timeLimit(.minutes(1)))
struct CancellableTransportTests {
    @Test func theSessionStopsACancellableTransportFromOutsideTheCallersTask() async throws {
        let transport = HoldingTransport()
        try await withSession(
            Configuration { $0.baseURL = URL(string: "https://api.example.com") },
            transport: transport
        ) { session in
            let answered = try await session.send(Request<String>.get("/answer"))
            #expect(answered.value == "held back", "answered through send(_:cancellation:), not the plain send(_:)")

            let late = await courierError {
                _ = try await session.send(Request<Data>.get("/hold").timeout(.milliseconds(200)))
            }
            #expect(late?.code == .timeout)
            #expect(transport.stops == 1, "the deadline reached the transport")

            let tagged = Task { try await session.send(Request<Data>.get("/hold").tag("held")) }
            await eventually("the tagged request is held") { transport.held == 2 }
            #expect(await session.pool.cancelAll(tag: "held") == 1)
            #expect(await Self.code(of: tagged) == .cancelled)
            #expect(transport.stops == 2, "the pool reached the transport")

            let caller = Task { try await session.send(Request<Data>.get("/hold")) }
            await eventually("the caller's request is held") { transport.held == 3 }
            caller.cancel()
            #expect(await Self.code(of: caller) == .cancelled)
            #expect(transport.stops == 3, "the caller's cancellation reached the transport")
            await eventually("the pool is empty") { await session.pool.isEmpty }
        }
    }

    @Test func itsPlainSendIsCancelledWithTheCallingTaskAlsoWhileTheBodyIsRead() async throws {
        let transport = EndlessBodyTransport()
        let request = PreparedRequest(
            method: .get,
            url: URL(filePath: "/endless"),
            headers: [:],
            body: .empty,
            timeouts: Timeouts(),
            deadline: .now + .seconds(60)
        )
        let reader = Task {
            var count = 0
            for try await chunk in try await transport.send(request).body { count += chunk.readableBytes }
            return count
        }
        await eventually("the first chunk is read") { transport.stops == 0 && transport.started }
        reader.cancel()
        guard case .failure(let error) = await reader.result else {
            Issue.record("the endless body ended")
            return
        }
        #expect((error as? CourierError)?.code == .cancelled)
        #expect(transport.stops == 1, "the task's cancellation reached the transport mid-body")
    }

    @Test func aCancellationReachesWhatIsRegisteredOnceAndWhatComesLaterAtOnce() {
        let cancellation = TransportCancellation()
        let stops = NIOLockedValueBox([String]())
        cancellation.onCancel { stops.withLockedValue { $0.append("replaced") } }
        cancellation.onCancel { stops.withLockedValue { $0.append("first") } }
        #expect(!cancellation.isCancelled)
        cancellation.cancel()
        cancellation.cancel()
        cancellation.onCancel { stops.withLockedValue { $0.append("late") } }
        #expect(cancellation.isCancelled)
        #expect(stops.withLockedValue { $0 } == ["first", "late"])
    }

    @Test func workRunInATaskOfItsOwnStopsWhenTheExchangeIsCancelled() async throws {
        let cancellation = TransportCancellation()
        let started = NIOLockedValueBox(false)
        let waiting = Task {
            try await cancellation.runInTask {
                started.withLockedValue { $0 = true }
                try await Task.sleep(for: .seconds(60))
                return "slept"
            }
        }
        await eventually("the work started") { started.withLockedValue { $0 } }
        cancellation.cancel()
        guard case .failure(let error) = await waiting.result else {
            Issue.record("the work was not stopped")
            return
        }
        #expect(error is CancellationError)
        #expect(try await TransportCancellation().runInTask { 42 } == 42)
    }

    private static func code(of task: Task<Response<Data>, any Error>) async -> CourierError.Code? {
        guard case .failure(let error) = await task.result else { return nil }
        return (error as? CourierError)?.code
    }
}

/// Answers `/answer` at once; holds every other request until it is cancelled, and counts the cancels it hears.
/// Its plain `send(_:)` answers differently, so a test sees which of the two the session called.
private final class HoldingTransport: Transport {
    private let counts = NIOLockedValueBox((held: 0, stops: 0))

    var held: Int { counts.withLockedValue { $0.held } }
    var stops: Int { counts.withLockedValue { $0.stops } }

    func send(_ request: PreparedRequest, cancellation: TransportCancellation) async throws -> TransportResponse {
        if request.url.path() == "/answer" { return Self.answer("held back") }
        counts.withLockedValue { $0.held += 1 }
        let resumed = NIOLockedValueBox(false)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            cancellation.onCancel { [counts] in
                guard
                    resumed.withLockedValue({ done in
                        defer { done = true }
                        return !done
                    })
                else { return }
                counts.withLockedValue { $0.stops += 1 }
                continuation.resume(throwing: CourierError.cancelled())
            }
        }
        return Self.answer("never")
    }

    func send(_ request: PreparedRequest) async throws -> TransportResponse { Self.answer("plain") }

    func shutdown() async throws {}

    private static func answer(_ text: String) -> TransportResponse {
        TransportResponse(
            status: .ok,
            headers: [.contentType: "text/plain"],
            body: ByteStream(chunks: [ByteBuffer(string: text)])
        )
    }
}

/// Answers with one chunk of a body that never ends until the exchange is cancelled; it has only
/// `send(_:cancellation:)`, so `send(_:)` is the protocol's own. Its body does not hear the task's cancellation
/// (an `AsyncStream` would end quietly), so only the protocol's `send(_:)` can stop it.
private final class EndlessBodyTransport: Transport {
    private struct State {
        var started = false
        var stops = 0
        var cancelled = false
        var sentFirst = false
        var waiting: CheckedContinuation<Void, any Error>?
    }

    private let state = NIOLockedValueBox(State())

    var started: Bool { state.withLockedValue { $0.started } }
    var stops: Int { state.withLockedValue { $0.stops } }

    func send(_ request: PreparedRequest, cancellation: TransportCancellation) async throws -> TransportResponse {
        cancellation.onCancel { [state] in
            let waiting = state.withLockedValue { state in
                state.stops += 1
                state.cancelled = true
                return state.waiting.take()
            }
            waiting?.resume(throwing: CourierError.cancelled())
        }
        state.withLockedValue { $0.started = true }
        let state = self.state
        return TransportResponse(
            status: .ok,
            headers: [:],
            body: ByteStream(
                ChunkSource {
                    if !state.withLockedValue({ state in
                        defer { state.sentFirst = true }
                        return state.sentFirst
                    }) {
                        return ByteBuffer(string: "first")
                    }
                    try await withCheckedThrowingContinuation { continuation in
                        let cancelled = state.withLockedValue { state in
                            if !state.cancelled { state.waiting = continuation }
                            return state.cancelled
                        }
                        if cancelled { continuation.resume(throwing: CourierError.cancelled()) }
                    }
                    return nil
                }
            )
        )
    }

    func shutdown() async throws {}
}

/// A body whose chunks come from a closure, iterated once.
private struct ChunkSource: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let next: @Sendable () async throws -> ByteBuffer?

    init(_ next: @escaping @Sendable () async throws -> ByteBuffer?) { self.next = next }

    func makeAsyncIterator() -> Iterator { Iterator(next: next) }

    struct Iterator: AsyncIteratorProtocol {
        let next: @Sendable () async throws -> ByteBuffer?
        mutating func next() async throws -> ByteBuffer? { try await next() }
    }
}
