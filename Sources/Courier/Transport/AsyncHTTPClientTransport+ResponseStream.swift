import AsyncHTTPClient
import HTTPTypes
import NIOCore
import NIOHTTP1

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One exchange of ``AsyncHTTPClientTransport``: receives AsyncHTTPClient's delegate calls on the event loop,
/// hands the head to the waiting caller, and feeds body parts into a backpressured async sequence, or, when the
/// session hands the body to a ``ResponseSink``, to the sink as they arrive.
///
/// A held body (`holdsBody`) waits for the session to say where it goes: until the body is first iterated or
/// handed to a sink, its first chunks are kept here (then AsyncHTTPClient is held back), so none goes to the
/// sequence that a sink was meant to get, and none is lost when the connection fails meanwhile.
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
        /// Where the body's chunks go.
        var destination = Destination.sequence
        /// The loop the exchange runs on, once the head has come: where a held body's destination is set.
        var loop: (any EventLoop)?
        /// What the sink threw, which the exchange ends with.
        var sinkFailure: (any Error)?
        /// The caller waiting for a sunk body's end.
        var sinkWaiter: CheckedContinuation<Void, Never>?
        /// How the exchange ended, once it has.
        var outcome: Result<Void, any Error>?
        /// The connection that carries the request, once its head has gone out.
        var connection: ConnectionUse?
        /// Whether the request's head has gone out.
        var headSent = false
    }

    /// Where the body's chunks go.
    private enum Destination {
        /// Into the async sequence its reader iterates.
        case sequence
        /// Nowhere yet: a held body's first chunks, kept until the session says.
        case undecided([ByteBuffer])
        /// To a sink, as they arrive; `suspension` holds the next one back.
        case sink(any ResponseSink, suspension: Call)
    }

    /// What one arriving chunk does.
    private enum Route {
        /// It was kept, with the future that holds AsyncHTTPClient back once enough are.
        case kept(EventLoopFuture<Void>?)
        case sink(any ResponseSink, Call)
        case sequence(Producer.Source?)
    }

    /// How many chunks a held body keeps before AsyncHTTPClient is held back (below the sequence's high watermark,
    /// so they all fit in it).
    private static let heldChunks = 16

    private let state = Locked(State())
    private let timeouts: Timeouts
    private let url: URL
    /// The proxy the request goes through, which a refusal names.
    private let proxy: Proxy?
    private let holdsBody: Bool

    init(timeouts: Timeouts, url: URL, proxy: Proxy?, holdsBody: Bool = false) {
        self.timeouts = timeouts
        self.url = url
        self.proxy = proxy
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
        state.withLock { $0.loop }?.execute { self.decide(.sequence) }
    }

    func deliver(into sink: any ResponseSink, suspension: Call) async throws {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let loop = state.withLock { state in
                state.sinkWaiter = continuation
                return state.loop
            }
            guard let loop else { return continuation.resume() }  // never: a body exists once its head has come
            loop.execute { self.decide(.sink(sink, suspension: suspension)) }
        }
        // The outcome goes under the lock, which also orders the sink's last write before the caller reads it back.
        let outcome = state.withLock { state in state.sinkFailure.map { .failure($0) } ?? state.outcome }
        try (outcome ?? .failure(CourierError.noResponse())).get()
    }

    /// Sends a held body's kept chunks, then the rest, to `destination`; on the loop, so no chunk can arrive in
    /// between. A body whose destination was set already keeps it.
    private func decide(_ destination: Destination) {
        let decided = state.withLock { state -> (parts: [ByteBuffer], demand: EventLoopPromise<Void>?, ended: Bool)? in
            guard case .undecided(let parts) = state.destination else { return nil }
            state.destination = destination
            return (parts, state.demand.take(), state.outcome != nil)
        }
        guard let decided else {
            // Only a body read as a sequence before it was handed to a sink gets here: its caller must not wait.
            guard case .sink = destination else { return }
            let waiter = state.withLock { state in
                state.sinkFailure = CourierError(code: .invalidState, message: "the body was read before the sink")
                return state.sinkWaiter.take()
            }
            waiter?.resume()
            return
        }
        defer { decided.demand?.succeed() }
        switch destination {
        case .sink(let sink, _):
            for part in decided.parts {
                do { try sink.write(part) } catch {
                    state.withLock { $0.sinkFailure = error }
                    if !decided.ended { return cancel() }  // the end then wakes the caller
                    break
                }
            }
            if decided.ended { state.withLock { $0.sinkWaiter.take() }?.resume() }
        case .sequence, .undecided:
            let source = state.withLock { $0.source }
            for part in decided.parts { _ = source?.yield(part) }
            guard decided.ended else { return }
            switch state.withLock({ $0.outcome }) {
            case .failure(let failure)?: source?.finish(failure)
            default: source?.finish()
            }
        }
    }

    // MARK: HTTPClientResponseDelegate (on the task's event loop)

    func didSendRequestHead(task: HTTPClient.Task<Void>, _ head: HTTPRequestHead) {
        let connection = ConnectionSlot.take(for: head)
        state.withLock { state in
            state.headSent = true
            if let connection { state.connection = connection }
        }
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        let produced = Producer.makeSequence(
            backPressureStrategy: .init(lowWatermark: 8, highWatermark: 32),
            finishOnDeinit: true,
            delegate: self
        )
        var response = AsyncHTTPClientTransport.response(
            head.status,
            head.headers,
            body: produced.sequence,
            timeouts: timeouts,
            url: url,
            version: head.version
        )
        state.withLock { state in
            response.connection = state.connection
            state.source = produced.source
            state.head = .success(holdsBody ? response.holding(self) : response)
            if holdsBody { (state.destination, state.loop) = (.undecided([]), task.eventLoop) }
            return state.headWaiter.take()
        }?.resume()
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        let route = state.withLock { state -> Route in
            switch state.destination {
            case .sequence: return .sequence(state.source)
            case .sink(let sink, let suspension): return .sink(sink, suspension)
            case .undecided(var parts):
                state.destination = .sequence  // so the kept chunks are not copied while one more goes in
                parts.append(buffer)
                state.destination = .undecided(parts)
                guard parts.count >= Self.heldChunks else { return .kept(nil) }
                let demand = task.eventLoop.makePromise(of: Void.self)
                state.demand = demand
                return .kept(demand.futureResult)
            }
        }
        let source: Producer.Source
        switch route {
        case .kept(let held):
            return held ?? task.eventLoop.makeSucceededVoidFuture()
        case .sink(let sink, let suspension):
            do { try sink.write(buffer) } catch {
                state.withLock { $0.sinkFailure = error }
                return task.eventLoop.makeFailedFuture(error)
            }
            return suspension.notSuspended(on: task.eventLoop)
        case .sequence(let producing?):
            source = producing
        case .sequence(nil):
            return task.eventLoop.makeSucceededVoidFuture()
        }
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
        end(failure: failure(error))
    }

    /// The typed error for `error`, which ended the exchange.
    private func failure(_ error: any Error) -> CourierError {
        let (headSent, cancelled) = state.withLock { ($0.headSent, $0.cancelled) }
        if let unsent = UnprocessedRequests.neverSent(error, headSent: headSent, cancelled: cancelled) {
            return unsent
        }
        return AsyncHTTPClientTransport.translate(error, timeouts: timeouts, url: url, proxy: proxy)
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
        end(failure: failure(error))
    }

    /// Tells the caller waiting for the head, or else the body's reader or sink, how the exchange ended; only the
    /// first end counts. A sink's own error is the end's, as the sink threw it.
    private func end(failure: (any Error)?) {
        let ending = state.withLock { state -> Ending? in
            guard !state.ended else { return nil }
            state.ended = true
            let failure = state.sinkFailure ?? failure
            state.outcome = failure.map { .failure($0) } ?? .success(())
            var ending = Ending(failure: failure, demand: state.demand.take())
            if let headWaiter = state.headWaiter.take() {
                state.head = .failure(failure ?? CourierError.noResponse())
                ending.waiter = headWaiter
                return ending
            }
            switch state.destination {
            case .sequence: ending.source = state.source
            case .sink: ending.waiter = state.sinkWaiter.take()
            case .undecided: break  // the kept chunks, then the end, go where the session says
            }
            return ending
        }
        guard let ending else { return }
        if let failure = ending.failure { ending.source?.finish(failure) } else { ending.source?.finish() }
        ending.demand?.succeed()  // a promise must not be dropped pending; nothing more arrives
        ending.waiter?.resume()
    }

    /// What an end completes outside the lock.
    private struct Ending {
        var failure: (any Error)?
        var demand: EventLoopPromise<Void>?
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
    /// This response, whose body `stream` holds until it is first read: iterating it lets the chunks flow, and a
    /// sink can have them instead (``sinkable``).
    fileprivate func holding(_ stream: ResponseStream) -> TransportResponse {
        var held = self
        held.body = ByteStream(OpeningBody(base: body, stream: stream))
        held.sinkable = stream
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
                // The head has come: the proxy, if any, let the request through.
                throw AsyncHTTPClientTransport.translate(error, timeouts: timeouts, url: url, proxy: nil)
            }
        }
    }
}

extension AsyncHTTPClientTransport: BodyHoldingTransport {}
