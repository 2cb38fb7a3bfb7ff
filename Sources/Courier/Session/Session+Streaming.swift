public import Foundation
public import HTTPTypes

/// A response whose body is still arriving: what ``Session/stream(_:)`` returns.
public struct StreamedResponse: Sendable {
    /// The URL that answered, after redirects.
    public var url: URL
    /// The status.
    public var status: HTTPResponse.Status
    /// The headers.
    public var headers: HTTPFields
    /// The body as it arrives, not decompressed; iterate it once. Errors thrown while iterating are
    /// ``CourierError``s.
    public var body: ByteStream
}

extension Session {
    /// Sends `request`, follows redirects and returns as soon as the final head arrives, with the body still
    /// streaming: for bodies too large for memory, such as downloads.
    ///
    /// The session's headers, adapters, redirect policy and timeouts apply; its validators, cache, retries and
    /// pool do not, since the caller reads the body itself. The request's total timeout still bounds the whole
    /// exchange, so raise it for long transfers. The body is not decompressed: ask for `Accept-Encoding: identity`
    /// when you need the bytes as stored.
    ///
    /// ```swift
    /// let response = try await session.stream(Request<Data>.get("/big").timeout(.seconds(3600)))
    /// for try await chunk in response.body { try file.write(contentsOf: chunk.readableBytesView) }
    /// ```
    public nonisolated func stream(_ request: Request<Data>) async throws -> StreamedResponse {
        let executor = try executor()
        do {
            let prepared = try await RequestPreparation(snapshot: executor.snapshot).prepare(request.erased)
            let timeouts = executor.configuration.timeouts.applying(request.timeouts)
            let (sent, response, _) = try await executor.open(prepared, timeouts: timeouts, deadline: .now + timeouts.total,
                                                               cookies: request.cookieHandling(under: executor.snapshot),
                                                               log: executor.snapshot.debugLog)
            return StreamedResponse(url: sent.url, status: response.status, headers: response.headers, body: response.body)
        } catch {
            throw RequestExecutor.normalize(error)
        }
    }
}
