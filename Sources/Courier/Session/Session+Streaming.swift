public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A response whose body is still arriving: what ``Session/stream(_:)`` returns.
public struct StreamedResponse: Sendable {
    /// The URL that answered, after redirects.
    public var url: URL
    /// The status.
    public var status: HTTPResponse.Status
    /// The headers.
    public var headers: HTTPFields
    /// The HTTP version that carried the answer (`HTTP/1.1`, `HTTP/2`); `nil` when the transport does not say.
    public var version: String?
    /// The body as it arrives, decoded as ``Session/send(_:)`` decodes one (gzip and deflate, while
    /// ``Configuration/decompressesResponses`` is on); iterate it once. Errors thrown while iterating are
    /// ``CourierError``s.
    public var body: ByteStream
    /// Whether the transport decoded the body already (`URLSession` does), though the headers still name the coding.
    var isContentDecoded = false
    /// When the call started and its head arrived (``Timing/end`` is that moment too: the body is still to come),
    /// and the connection that carried it.
    public var timing: Timing
}

extension Session {
    /// Sends `request`, follows redirects and returns as soon as the final head arrives, with the body still
    /// streaming: for bodies too large for memory, such as downloads.
    ///
    /// It is a call like any other up to its head: the session's headers, adapters, redirect policy, retry rule,
    /// authentication (a refused credential is refreshed and the request sent again) and timeouts apply. The
    /// ``Session/pool`` tracks it until its body has been read, failed or been dropped, so its controls (cancel by
    /// id, URL or tag, drain) and the request's total timeout reach the body too: raise the timeout for long
    /// transfers. A transfer takes no slot under the pool's concurrency limits, so a long one never holds up
    /// short requests. The validators and the cache do not apply, since the caller reads the body itself.
    ///
    /// The body is decoded as it is read, as a whole body is: a gzip or deflate answer arrives decoded, within the
    /// session's ratio bound (``ResponseLimits/maxDecompressionRatio``; a stream has no bound on bytes), and its
    /// headers lose `Content-Encoding` and `Content-Length`, which described the coded bytes. For the bytes as the server sent them, turn
    /// ``Configuration/decompressesResponses`` off, or ask for `Accept-Encoding: identity`.
    ///
    /// ```swift
    /// let response = try await session.stream(Request<Data>.get("/big").timeout(.seconds(3600)))
    /// for try await chunk in response.body { try file.write(contentsOf: chunk.readableBytesView) }
    /// ```
    public nonisolated func stream(_ request: Request<Data>) async throws -> StreamedResponse {
        let erased = request.erased
        let (executor, known) = try executor(for: erased)
        return try await executor.stream(erased, known: known)
    }
}

extension Session {
    /// Sends `request` as ``stream(_:)`` does and hands the answer to `sink`: its head, then each chunk of its body
    /// where it arrives. With ``AsyncHTTPClientTransport`` the chunks go to the sink on the event loop that reads
    /// the connection, so none waits for a task to be woken; with another transport, as this task reads them.
    /// Returns the head (its `body` empty) once the body has ended.
    ///
    /// Only the delivered answer reaches the sink: a redirect's body or one a retry replaces is read past. What the
    /// sink throws stops the exchange and is thrown here as it was thrown; the call ends failed at the monitors.
    ///
    /// ```swift
    /// import NIOCore
    ///
    /// // The session calls a sink one call after another, never at once, and returns after its last write,
    /// // so the count needs no lock.
    /// final class Counter: ResponseSink, @unchecked Sendable {
    ///     var bytes = 0
    ///     func head(_ response: StreamedResponse) throws {}
    ///     func write(_ chunk: ByteBuffer) throws { bytes += chunk.readableBytes }
    /// }
    /// let counter = Counter()
    /// let head = try await session.stream(Request<Data>.get("/big"), into: counter)
    /// print(head.status, counter.bytes)
    /// ```
    @discardableResult
    public nonisolated func stream(
        _ request: Request<Data>,
        into sink: some ResponseSink
    ) async throws -> StreamedResponse {
        let erased = request.erased
        let (executor, known) = try executor(for: erased)
        return try await executor.stream(erased, known: known, into: sink)
    }
}

extension Session {
    /// ``stream(_:)`` with the body as the server sent it, coded or not: a download's ranges count the coded bytes,
    /// and the command line counts what arrived as it decodes what it shows.
    package nonisolated func streamAsSent(_ request: Request<Data>) async throws -> StreamedResponse {
        let erased = request.erased
        let (executor, known) = try executor(for: erased)
        return try await executor.stream(erased, known: known, decodesBody: false)
    }

    /// ``stream(_:into:)`` with the body as the server sent it (see ``streamAsSent(_:)``).
    @discardableResult
    package nonisolated func streamAsSent(
        _ request: Request<Data>,
        into sink: some ResponseSink
    ) async throws -> StreamedResponse {
        let erased = request.erased
        let (executor, known) = try executor(for: erased)
        return try await executor.stream(erased, known: known, into: sink, decodesBody: false)
    }
}

extension StreamedResponse {
    /// ``CourierError/Code/httpStatus`` for this answer's status, with its URL redacted: what a reader of a stream
    /// (events, JSON lines) throws when the status is not one it reads.
    var statusError: CourierError {
        .httpStatus(status, bodyPreview: nil, url: Redactor.standard.redact(urlText: url.absoluteString))
    }
}
