public import NIOCore

/// Takes a streamed response's body chunk by chunk where it arrives: with ``AsyncHTTPClientTransport``, on the
/// event loop that reads the connection, so no chunk waits for a task to be woken; with any other transport, in
/// the caller's task as it reads the body. See ``Session/stream(_:into:)``.
///
/// The session calls it from one exchange at a time, one call after another, never at once: ``head(_:)`` first,
/// then ``write(_:)`` for each chunk in order. A sink that keeps state may therefore keep it without a lock; it is
/// still `Sendable`, since the calls come from more than one thread.
public protocol ResponseSink: AnyObject, Sendable {
    /// The head of the answer the call delivers (after redirects and retries), in the caller's task, before any
    /// chunk; its `body` is empty, since the chunks come to ``write(_:)``. Throwing ends the call with that error.
    func head(_ response: StreamedResponse) throws

    /// The next chunk of the body, decoded as ``Session/stream(_:)`` decodes one. Throwing stops the exchange, and the call throws
    /// that error. With ``AsyncHTTPClientTransport`` it runs on the event loop: it must not wait for anything but
    /// the write it does.
    func write(_ chunk: ByteBuffer) throws
}

/// A transport's body that can hand its chunks to a ``ResponseSink`` where they arrive, instead of through an
/// async sequence.
protocol SinkableBody: AnyObject, Sendable {
    /// Hands every chunk of the body to `sink`, in order, and returns when the body has ended; throws how it failed
    /// (the sink's own error as the sink threw it). While `suspension` is suspended, no chunk is read.
    func deliver(into sink: any ResponseSink, suspension: Call) async throws
}

/// A transport that can keep an answer's body unread until the session decides where it goes: read as a sequence,
/// or handed to a ``ResponseSink`` (``SinkableBody``).
protocol BodyHoldingTransport: Transport {
    /// Sends `request` as ``Transport/send(_:cancellation:)`` does; with `holdingBody`, the body's chunks wait for
    /// its first reader, and the response can hand them to a sink (``TransportResponse/sinkable``).
    func send(
        _ request: PreparedRequest,
        cancellation: TransportCancellation,
        holdingBody: Bool
    ) async throws -> TransportResponse
}
