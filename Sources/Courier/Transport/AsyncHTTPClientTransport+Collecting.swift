import AsyncHTTPClient
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension AsyncHTTPClientTransport: CollectingTransport {
    /// Sends `request` through AsyncHTTPClient's delegate API and collects the body in the delegate, on the event
    /// loop of the request's lane (where its connection is too). Its caller is woken when the exchange ends and
    /// takes the whole response from its ``Call``; see ``CollectingTransport``.
    /// `call` reaches AsyncHTTPClient's task, and the session's pool enforces the deadline through it, so
    /// AsyncHTTPClient runs no timer of its own for the request.
    ///
    /// An HTTP/1.1 request starts from its lane's loop, in one hop: started from the caller's thread,
    /// AsyncHTTPClient hops to the connection's loop to write it, and waiting on the task's future from there hops
    /// again to register the callback, two cross-thread wake-ups where one does. A request that may go over HTTP/2
    /// (whose one connection to the host carries every stream on one loop) starts from the caller's thread
    /// instead: there the loop is what bounds the throughput, and starting requests is work it need not do
    /// (get-small-h2-c64 0.985-1.028 of raw AsyncHTTPClient this way, 0.932-0.964 from the loop).
    nonisolated(nonsending) func fetch(
        _ request: PreparedRequest,
        reading: BodyReading,
        call: Call
    ) async throws -> ResponseBody {
        try await exchange(request) { client, bodiless, startsFromLoop in
            let loop = client.eventLoopGroup.next()  // the lane's one loop
            // Only a body that is written chunk by chunk can still be going out when the answer comes.
            let earlyAnswer: EarlyAnswer? = AsyncHTTPClientTransport.writesInChunks(request.body) ? EarlyAnswer() : nil
            var withBody = bodiless
            withBody.body = AsyncHTTPClientTransport.body(
                request.body,
                idle: request.timeouts.readIdle,
                suspension: call,
                earlyAnswer: earlyAnswer
            )
            let outgoing = withBody  // a constant, for the task's closures
            let delegate = CollectingDelegate(
                method: request.method,
                reading: reading,
                loop: loop,
                call: call,
                earlyAnswer: earlyAnswer
            )
            /// Starts AsyncHTTPClient's task. Started on the loop, the delegate stands for it in the call's cancel slot;
            /// otherwise the task itself goes in, here.
            @Sendable func execute(onLoop: Bool) -> HTTPClient.Task<ResponseBody> {
                // not .delegateAndChannel: see the lanes
                let task = client.execute(request: outgoing, delegate: delegate, eventLoop: .delegate(on: loop))
                let installed: any RequestCancellable = onLoop ? delegate : task
                if !onLoop { call.install(task) }
                task.futureResult.whenComplete { result in
                    if onLoop { delegate.taskEnded() }
                    call.finish(
                        result.flatMapError { error in
                            if let unsent = delegate.neverSent(error) { return .failure(unsent) }
                            guard let error = error as? HTTPClientError, error == .requestStreamCancelled,
                                !call.isCancelled
                            else {
                                return .failure(error)
                            }
                            return Result { try delegate.answerBeforeTheBodyEnded() }
                        },
                        of: installed
                    )
                }
                return task
            }
            let ended: Result<ResponseBody, any Error>
            if startsFromLoop {
                // Started on the loop, the task lives there: the delegate stands for it in the call's cancel slot,
                // installed in the same lock round trip as the caller's wait, and a cancel reaches it through the loop.
                ended = await call.awaitAnswer(installing: delegate) {
                    loop.execute {
                        guard delegate.start({ execute(onLoop: true) }) else {
                            return call.finish(.failure(CourierError.cancelled()), of: delegate)
                        }
                    }
                }
            } else {
                ended = await call.awaitAnswer { _ = execute(onLoop: false) }
            }
            return try ended.get()
        }
    }
}

extension HTTPClient.Task: RequestCancellable {}

/// Collects one response in AsyncHTTPClient's delegate callbacks, all on the connection's event loop: checks the
/// head, decompresses and bounds the body as it arrives, and fails the request as soon as a limit is passed.
/// While the request is suspended its futures stay pending, so AsyncHTTPClient stops reading the connection.
///
/// Started on its loop, it also stands for AsyncHTTPClient's task in the call's cancel slot: it is there before the
/// task exists, and its ``cancel()`` reaches the task through the loop, where both live.
final class CollectingDelegate: HTTPClientResponseDelegate, RequestCancellable {
    typealias Response = ResponseBody

    /// What is read so far, once the head has arrived.
    private struct Collected {
        var head: HTTPResponseHead
        var body: BodyAccumulator
    }

    /// What lives on the loop: the answer read so far, and the task that reads it.
    private struct OnLoop {
        var collected: Collected?
        /// The connection that carries the request, once its head has gone out.
        var connection: ConnectionUse?
        /// Whether the request's head has gone out.
        var headSent = false
        var task: HTTPClient.Task<ResponseBody>?
        var isCancelled = false
        var hasEnded = false
    }

    private let method: HTTPRequest.Method
    private let reading: BodyReading
    private let loop: any EventLoop
    private let onLoop: NIOLoopBoundBox<OnLoop>
    private let call: Call
    /// Told when a head of 300 or more arrives while the body may still be going out.
    private let earlyAnswer: EarlyAnswer?

    init(
        method: HTTPRequest.Method,
        reading: BodyReading,
        loop: any EventLoop,
        call: Call,
        earlyAnswer: EarlyAnswer? = nil
    ) {
        self.earlyAnswer = earlyAnswer
        self.method = method
        self.reading = reading
        self.call = call
        self.loop = loop
        onLoop = .makeBoxSendingValue(OnLoop(), eventLoop: loop)
    }

    /// Starts the task with `execute` (on the loop), unless the exchange was cancelled first: then `false`.
    func start(_ execute: () -> HTTPClient.Task<ResponseBody>) -> Bool {
        guard !onLoop.value.isCancelled else { return false }
        let task = execute()
        // A task that ended at once (its future already complete) is not kept: nothing would let it go.
        if !onLoop.value.hasEnded { onLoop.value.task = task }
        return true
    }

    /// Lets the task go once it has ended (on the loop): it holds this delegate.
    func taskEnded() {
        onLoop.value.task = nil
        onLoop.value.hasEnded = true
    }

    /// Cancels the task, or, when it has not started yet, keeps it from starting; through the loop.
    func cancel() {
        loop.execute { [onLoop] in
            onLoop.value.isCancelled = true
            onLoop.value.task?.cancel()
        }
    }

    func didSendRequestHead(task: HTTPClient.Task<ResponseBody>, _ head: HTTPRequestHead) {
        onLoop.value.headSent = true
        onLoop.value.connection = ConnectionSlot.take(for: head)
    }

    /// The unprocessed error `error` stands for when the request's head never went out (on the loop).
    func neverSent(_ error: any Error) -> CourierError? {
        UnprocessedRequests.neverSent(
            error,
            headSent: onLoop.value.headSent,
            cancelled: onLoop.value.isCancelled || call.isCancelled
        )
    }

    func didReceiveHead(task: HTTPClient.Task<ResponseBody>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        do {
            let framing = Self.framing(head.headers)
            let body = try BodyAccumulator(
                contentEncoding: framing.encoding,
                contentLength: framing.length,
                method: method,
                limits: reading.limits,
                decompresses: reading.decompresses,
                meter: reading.meter
            )
            onLoop.value.collected = Collected(head: head, body: body)
            // AsyncHTTPClient stops asking for the rest of a body the server refused: stop writing it.
            if head.status.code >= 300 { earlyAnswer?.answered() }
            return call.notSuspended(on: task.eventLoop)
        } catch {
            return task.eventLoop.makeFailedFuture(error)
        }
    }

    func didReceiveBodyPart(task: HTTPClient.Task<ResponseBody>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        do {
            try onLoop.value.collected?.body.append(buffer)
            return call.notSuspended(on: task.eventLoop)
        } catch {
            return task.eventLoop.makeFailedFuture(error)
        }
    }

    func didFinishRequest(task: HTTPClient.Task<ResponseBody>) throws -> ResponseBody {
        try response()
    }

    /// The answer, when AsyncHTTPClient ended the task without calling ``didFinishRequest(task:)``.
    ///
    /// One path in AsyncHTTPClient 1.37 does that: an answer of 300 or more that arrives whole while the streamed
    /// request body has not yet reported its end (the server answered as the last bytes went out). AsyncHTTPClient
    /// closes the connection, fails writing the request's end with `requestStreamCancelled`, and fails only the
    /// task's future; every part of the answer had gone through the delegate by then. Call it on the loop.
    func answerBeforeTheBodyEnded() throws -> ResponseBody {
        guard onLoop.value.collected != nil else { throw HTTPClientError.requestStreamCancelled }
        return try response()
    }

    private func response() throws -> ResponseBody {
        guard let collected = onLoop.value.collected.take() else {
            throw CourierError.noResponse()
        }
        // The fields are kept as they came, made `HTTPFields` only when read (see ``ResponseFields``).
        var body = ResponseBody(
            status: AsyncHTTPClientTransport.status(collected.head.status),
            fields: ResponseFields(arrived: collected.head.headers),
            data: BodyAccumulator.data(try collected.body.finishBuffer())
        )
        body.connection = onLoop.value.connection
        return body
    }

    /// `Content-Length` and the `Content-Encoding` values (joined with ", ", as `HTTPFields` joins them), found
    /// in one pass over the head, comparing names in place. (A second `Content-Length` never gets this far: the
    /// parser refuses it, so the first is the only one.)
    static func framing(_ headers: HTTPHeaders) -> (length: String?, encoding: String?) {
        var length: String?
        var encoding: String?
        for (name, value) in headers {
            if length == nil, name.equalsASCIICaseInsensitive("content-length") {
                length = value
            } else if name.equalsASCIICaseInsensitive("content-encoding") {
                encoding = encoding.map { "\($0), \(value)" } ?? value
            }
        }
        return (length, encoding)
    }
}
