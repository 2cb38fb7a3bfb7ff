import AsyncHTTPClient
import NIOCore
import NIOHTTP2

/// The requests a server never processed, told apart so they can be sent again whatever their method (RFC 9113
/// §8.7, RFC 9110 §9.2.2): ``CourierError/isUnprocessed``.
///
/// Two kinds. First, HTTP/2 streams a graceful shutdown left: a server that closes a connection sends `GOAWAY`
/// with the last stream it will process, and every stream above it was not processed (§6.8); NIO closes each
/// with `CANCEL`. nginx does this after `keepalive_requests` (1,000 by default) and on every reload, so a batch
/// at some concurrency has streams in flight above the last one. A stream reset with `REFUSED_STREAM` was not
/// processed either. AsyncHTTPClient fails such a request with NIO's `StreamClosed`, which says nothing of the
/// `GOAWAY`, and a reset with `CANCEL` after the server processed the request looks the same. So a handler on the
/// connection (``GoAwayRecord``) keeps the last stream id of the `GOAWAY` it saw, and one in front of each stream
/// (``UnprocessedStreamCheck``) replaces its `StreamClosed` with ``unprocessed(_:)`` when the stream is above
/// that id, or was refused.
///
/// Second, a request whose head never went out: AsyncHTTPClient had given it to a connection that then closed
/// (after its `GOAWAY`, the server closes the connection once its last streams are served; an HTTP/1.1
/// connection the server closed while idle), and it fails with `ioOnClosedChannel`, or with `cancelled` that
/// Courier did not ask for (AsyncHTTPClient's answer to a request that reached a closing connection), before the
/// delegate heard `didSendRequestHead` (``neverSent(_:headSent:cancelled:)``).
enum UnprocessedRequests {
    /// `configuration` with the record on every HTTP/2 connection and the check on every stream, ahead of any
    /// initialiser the caller set (which still runs, after).
    static func installing(on configuration: HTTPClient.Configuration) -> HTTPClient.Configuration {
        var configuration = configuration
        configuration.http2ConnectionDebugInitializer = ConnectionInitializers.chaining(
            { channel in try channel.pipeline.syncOperations.addHandler(GoAwayRecord()) },
            before: configuration.http2ConnectionDebugInitializer
        )
        configuration.http2StreamChannelDebugInitializer = ConnectionInitializers.chaining(
            { channel in try channel.pipeline.syncOperations.addHandler(UnprocessedStreamCheck(), position: .first) },
            before: configuration.http2StreamChannelDebugInitializer
        )
        return configuration
    }

    /// Whether the stream `closed` names was not processed by the server, given the last stream id of the
    /// connection's `GOAWAY` (`nil` before one came).
    static func isUnprocessed(_ closed: NIOHTTP2Errors.StreamClosed, lastStreamID: HTTP2StreamID?) -> Bool {
        switch closed.errorCode {
        case .refusedStream: true
        case .cancel: lastStreamID.map { closed.streamID > $0 } ?? false
        default: false
        }
    }

    /// The error for a request that failed with `error` before its head went out (`headSent` false): unprocessed
    /// when the connection was closed before anything of it was written; `nil` otherwise. `cancelled`: Courier
    /// cancelled the request (then a cancellation is one).
    static func neverSent(_ error: any Error, headSent: Bool, cancelled: Bool) -> CourierError? {
        guard !headSent else { return nil }
        let closed = (error as? ChannelError) == .ioOnClosedChannel
        let closing = (error as? HTTPClientError) == .cancelled && !cancelled
        guard closed || closing else { return nil }
        return unprocessed("the connection closed before the request was sent", underlying: error)
    }

    /// The error for a stream the server did not process.
    static func unprocessed(_ closed: NIOHTTP2Errors.StreamClosed) -> CourierError {
        unprocessed(
            closed.errorCode == .refusedStream
                ? "the server refused the HTTP/2 stream before processing it (REFUSED_STREAM)"
                : "the server closed the HTTP/2 connection (GOAWAY) before processing the request",
            underlying: closed
        )
    }

    /// A ``CourierError/isUnprocessed`` error saying `message`.
    private static func unprocessed(_ message: String, underlying: any Error) -> CourierError {
        var error = CourierError(code: .connectionClosed, message: message, underlying: underlying)
        error.isUnprocessed = true
        return error
    }
}

/// Keeps the last stream id of the `GOAWAY` an HTTP/2 connection received. It sits at the end of the connection's
/// pipeline, which NIO's multiplexer passes the connection's own frames to.
final class GoAwayRecord: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame

    /// The lowest last stream id of the `GOAWAY`s so far (a server may send several, each lower).
    private(set) var lastStreamID: HTTP2StreamID?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .goAway(let last, _, _) = unwrapInboundIn(data).payload {
            lastStreamID = min(lastStreamID ?? last, last)
        }
        context.fireChannelRead(data)
    }
}

/// In front of an HTTP/2 stream's handlers: replaces the `StreamClosed` of a stream the server did not process
/// with ``UnprocessedRequests/unprocessed(_:)``, both where the stream's pipeline hears it and where a write
/// it failed is told; and, once it has, every later failure of the stream (a request body's next write fails
/// with `ioOnClosedChannel`).
final class UnprocessedStreamCheck: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = Any
    typealias InboundOut = Any
    typealias OutboundIn = Any
    typealias OutboundOut = Any

    /// The stream's unprocessed error, once it was closed unprocessed.
    private var unprocessed: CourierError?

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.fireErrorCaught(mapped(error, on: context.channel))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard let promise else { return context.write(data, promise: nil) }
        let written = context.eventLoop.makePromise(of: Void.self)
        let channel = context.channel
        written.futureResult.assumeIsolated().whenComplete { result in
            switch result {
            case .success: promise.succeed()
            case .failure(let error): promise.fail(self.mapped(error, on: channel))
            }
        }
        context.write(data, promise: written)
    }

    /// `error`, or the unprocessed error it stands for on `channel`, a stream of the connection that holds the
    /// ``GoAwayRecord``.
    private func mapped(_ error: any Error, on channel: any Channel) -> any Error {
        if let unprocessed { return unprocessed }
        guard let closed = error as? NIOHTTP2Errors.StreamClosed else { return error }
        let record = try? channel.parent?.pipeline.syncOperations.handler(type: GoAwayRecord.self)
        guard UnprocessedRequests.isUnprocessed(closed, lastStreamID: record?.lastStreamID) else { return error }
        let failure = UnprocessedRequests.unprocessed(closed)
        unprocessed = failure
        return failure
    }
}
