import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1

/// One exchange of ``AsyncHTTPClientTransport``: receives AsyncHTTPClient's delegate calls on the event loop,
/// hands the head to the waiting caller, and feeds body parts into a backpressured async sequence, or, when the
/// session hands the body to a ``ResponseSink``, to the sink as they arrive.
///
/// A held body (`holdsBody`) is not read until the session says where it goes: the future the head's callback
/// returns stays pending until the body is first iterated or handed to a sink, so no chunk can go to the sequence
/// that a sink was meant to get.
///
/// The head (or how the exchange ended before it) goes to the caller under the lock; the continuation only wakes
/// it. A continuation resumed before its task has suspended on it is taken up by the concurrency runtime with an
/// atomic that ThreadSanitizer cannot see, so a value passed through it looks like a race (see ``Call/awaitAnswer(installing:starting:)``).
final class ResponseStream: HTTPClientResponseDelegate, NIOAsyncSequenceProducerDelegate, SinkableBody {
    typealias Response = Void
    typealias Producer = NIOThrowingAsyncSequenceProducer<
        ByteBuffer, any Error, NIOAsyncSequenceProducerBackPressureStrategies.HighLowWatermark, ResponseStream
    >

    private struct State {
        /// The caller, while it waits for the head.
        var headWaiter: CheckedContinuation<Void, Never>?
        /// The head as the caller gets it, or how the exchange ended before one arrived.
        var head: Result<TransportResponse, any Error>?
        var task: HTTPClient.Task<Void>?
        var source: Producer.Source?
        var cancelled = false
        /// The future `didReceiveBodyPart` returned while the consumer is full; completed by `produceMore`.
        var demand: EventLoopPromise<Void>?
        /// `produceMore` arrived before the pause it ends was recorded.
        var earlyDemand = false
        /// The exchange has ended, and its caller or body reader has been told.
        var ended = false
        /// A held body's future, which the head's callback returned: completed when the body is first read.
        var gate: EventLoopPromise<Void>?
        /// The sink the body goes to, and the call whose suspension holds it back.
        var sink: (sink: any ResponseSink, suspension: Call)?
        /// What the sink threw, which the exchange ends with.
        var sinkFailure: (any Error)?
        /// The caller waiting for a sunk body's end.
        var sinkWaiter: CheckedContinuation<Void, Never>?
        /// How the exchange ended, once it has.
        var outcome: Result<Void, any Error>?
    }

    private let state = Locked(State())
    private let timeouts: Timeouts
    private let url: URL
    private let holdsBody: Bool

    init(timeouts: Timeouts, url: URL, holdsBody: Bool = false) {
        self.timeouts = timeouts
        self.url = url
        self.holdsBody = holdsBody
    }

    // MARK: Caller side

    func awaitHead(_ continuation: CheckedContinuation<Void, Never>) {
        state.withLock { $0.headWaiter = continuation }
    }

    /// The head, once the caller has been woken for it: the response, or how the exchange ended before one.
    func takeHead() throws -> TransportResponse {
        guard let head = state.withLock({ $0.head.take() }) else {
            throw CourierError.noResponse()
        }
        return try head.get()
    }

    func attach(_ task: HTTPClient.Task<Void>) {
        let cancelNow = state.withLock { state in
            state.task = task
            return state.cancelled
        }
        task.futureResult.whenComplete { self.taskEnded($0) }
        if cancelNow { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { state in
            state.cancelled = true
            return state.task
        }
        task?.cancel()
    }

    /// Lets a held body be read as a sequence: what its first iteration does.
    func readBody() {
        state.withLock { $0.gate.take() }?.succeed()
    }

    func deliver(into sink: any ResponseSink, suspension: Call) async throws {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (gate, endedAlready) = state.withLock { state in
                guard state.outcome == nil else { return (nil as EventLoopPromise<Void>?, true) }
                state.sink = (sink, suspension)
                state.sinkWaiter = continuation
                return (state.gate.take(), false)
            }
            if endedAlready { continuation.resume() } else { gate?.succeed() }
        }
        // The outcome goes under the lock, which also orders the sink's last write before the caller reads it back.
        try state.withLock { $0.outcome }?.get()
    }

    // MARK: HTTPClientResponseDelegate (on the task's event loop)

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let produced = Producer.makeSequence(
            backPressureStrategy: .init(lowWatermark: 8, highWatermark: 32),
            finishOnDeinit: true,
            delegate: self
        )
        let response = AsyncHTTPClientTransport.response(
            head.status,
            head.headers,
            body: produced.sequence,
            timeouts: timeouts,
            url: url,
            version: head.version
        )
        let gate = holdsBody ? task.eventLoop.makePromise(of: Void.self) : nil
        state.withLock { state in
            state.source = produced.source
            state.head = .success(holdsBody ? response.holding(self) : response)
            state.gate = gate
            return state.headWaiter.take()
        }?.resume()
        return gate?.futureResult ?? task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let (source, sink) = state.withLock { ($0.source, $0.sink) }
        if let sink {
            do { try sink.sink.write(buffer) } catch {
                state.withLock { $0.sinkFailure = error }
                return task.eventLoop.makeFailedFuture(error)
            }
            return sink.suspension.notSuspended(on: task.eventLoop)
        }
        guard let source else { return task.eventLoop.makeSucceededVoidFuture() }
        switch source.yield(buffer) {
        case .produceMore, .dropped:
            return task.eventLoop.makeSucceededVoidFuture()
        case .stopProducing:
            return state.withLock { state in
                if state.earlyDemand {
                    state.earlyDemand = false
                    return task.eventLoop.makeSucceededVoidFuture()
                }
                let promise = task.eventLoop.makePromise(of: Void.self)
                state.demand = promise
                return promise.futureResult
            }
        }
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        end(failure: nil)
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        end(failure: AsyncHTTPClientTransport.translate(error, timeouts: timeouts, url: url))
    }

    /// AsyncHTTPClient's task ended. The delegate has almost always heard already, and then this does nothing.
    ///
    /// One path in AsyncHTTPClient 1.37 ends the task without a delegate call: an answer of 300 or more that
    /// arrives whole while the streamed request body has not yet reported its end (the server answered as the
    /// last bytes went out). AsyncHTTPClient closes the connection, fails writing the request's end with
    /// `requestStreamCancelled`, and fails only the task's future. Every part of the answer had gone through
    /// the delegate by then, so its body ends normally; without this, its reader would wait forever.
    private func taskEnded(_ result: Result<Void, any Error>) {
        guard case .failure(let error) = result else { return end(failure: nil) }
        let answered = state.withLock { $0.source != nil }
        if answered, (error as? HTTPClientError) == .requestStreamCancelled { return end(failure: nil) }
        end(failure: AsyncHTTPClientTransport.translate(error, timeouts: timeouts, url: url))
    }

    /// Tells the caller waiting for the head, or else the body's reader or sink, how the exchange ended; only the
    /// first end counts. A sink's own error is the end's, as the sink threw it.
    private func end(failure: (any Error)?) {
        let ending = state.withLock { state -> Ending? in
            guard !state.ended else { return nil }
            state.ended = true
            let failure = state.sinkFailure ?? failure
            state.outcome = failure.map { .failure($0) } ?? .success(())
            var ending = Ending(failure: failure, demand: state.demand.take(), gate: state.gate.take())
            if let headWaiter = state.headWaiter.take() {
                state.head = .failure(failure ?? CourierError.noResponse())
                ending.waiter = headWaiter
            } else {
                (ending.source, ending.waiter) = (state.source, state.sinkWaiter.take())
            }
            return ending
        }
        guard let ending else { return }
        if let failure = ending.failure { ending.source?.finish(failure) } else { ending.source?.finish() }
        ending.demand?.succeed()
        ending.gate?.succeed()  // nothing reads a body that ended, and a promise must not be dropped pending
        ending.waiter?.resume()
    }

    /// What an end completes outside the lock.
    private struct Ending {
        var failure: (any Error)?
        var demand: EventLoopPromise<Void>?
        var gate: EventLoopPromise<Void>?
        /// The body's sequence, when no caller waits for the head.
        var source: Producer.Source?
        /// The caller waiting for the head, or for a sunk body's end.
        var waiter: CheckedContinuation<Void, Never>?
    }

    // MARK: NIOAsyncSequenceProducerDelegate (the consumer's side)

    func produceMore() {
        let demand = state.withLock { state in
            guard let demand = state.demand else {
                state.earlyDemand = true
                return nil as EventLoopPromise<Void>?
            }
            state.demand = nil
            return demand
        }
        demand?.succeed()
    }

    func didTerminate() {
        cancel()  // the consumer stopped reading or was cancelled: stop the request
    }
}

extension TransportResponse {
    /// This response, whose body is held by `stream` until it is first read: iterating it lets the chunks flow,
    /// and a sink can have them instead (``ByteStream/sinkable``).
    fileprivate func holding(_ stream: ResponseStream) -> TransportResponse {
        var held = self
        held.body = ByteStream(OpeningBody(base: body, stream: stream))
        held.body.sinkable = stream
        return held
    }
}

/// A held body: its first iteration lets the chunks flow.
private struct OpeningBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: ByteStream
    let stream: ResponseStream

    func makeAsyncIterator() -> ByteStream.AsyncIterator {
        stream.readBody()
        return base.makeAsyncIterator()
    }
}

/// The body sequence with AsyncHTTPClient's and SwiftNIO's errors translated to ``CourierError``.
struct TranslatingBody<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    let base: Base
    let timeouts: Timeouts
    let url: URL

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), timeouts: timeouts, url: url) }

    struct Iterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let timeouts: Timeouts
        let url: URL

        mutating func next() async throws -> ByteBuffer? {
            do { return try await base.next() } catch {
                throw AsyncHTTPClientTransport.translate(error, timeouts: timeouts, url: url)
            }
        }
    }
}

extension AsyncHTTPClientTransport: BodyHoldingTransport {}
