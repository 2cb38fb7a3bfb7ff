import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1

/// One exchange of ``AsyncHTTPClientTransport``: receives AsyncHTTPClient's delegate calls on the event loop,
/// hands the head to the waiting caller, and feeds body parts into a backpressured async sequence.
///
/// The head (or how the exchange ended before it) goes to the caller under the lock; the continuation only wakes
/// it. A continuation resumed before its task has suspended on it is taken up by the concurrency runtime with an
/// atomic that ThreadSanitizer cannot see, so a value passed through it looks like a race (see ``Call/awaitAnswer(installing:starting:)``).
final class ResponseStream: HTTPClientResponseDelegate, NIOAsyncSequenceProducerDelegate {
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
    }

    private let state = Locked(State())
    private let timeouts: Timeouts
    private let url: URL

    init(timeouts: Timeouts, url: URL) {
        self.timeouts = timeouts
        self.url = url
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
        state.withLock { state in
            state.source = produced.source
            state.head = .success(response)
            return state.headWaiter.take()
        }?.resume()
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        guard let source = state.withLock({ $0.source }) else { return task.eventLoop.makeSucceededVoidFuture() }
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

    /// Tells the caller waiting for the head, or else the body's reader, how the exchange ended; only the first
    /// end counts.
    private func end(failure: (any Error)?) {
        let ending = state.withLock {
            state -> (CheckedContinuation<Void, Never>?, Producer.Source?, EventLoopPromise<Void>?)? in
            guard !state.ended else { return nil }
            state.ended = true
            defer { state.demand = nil }
            guard let headWaiter = state.headWaiter.take() else { return (nil, state.source, state.demand) }
            state.head = .failure(failure ?? CourierError.noResponse())
            return (headWaiter, nil, state.demand)
        }
        guard let (headWaiter, source, demand) = ending else { return }
        if let headWaiter {
            headWaiter.resume()
        } else if let failure {
            source?.finish(failure)
        } else {
            source?.finish()
        }
        demand?.succeed()
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
