import HTTPTypes
import NIOCore

#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

extension StreamedResponse {
    /// This response with its body decompressed as it is read, when its `Content-Encoding` is gzip or deflate:
    /// the session asks for them itself (``Configuration/decompressesResponses``), so a streamed body may arrive
    /// compressed. `Content-Encoding` and `Content-Length` (the compressed length) are taken off the headers. Any
    /// other coding is left as it came.
    ///
    /// `limits` bound the decompressed bytes and the expansion ratio, as they bound a body ``Session/send(_:)``
    /// reads; raise `maxBodyBytes` for a stream meant to run on. Throws ``CourierError/Code/decompression`` for
    /// stacked codings (`gzip, gzip`).
    ///
    /// ```swift
    /// let response = try await session.stream(Request<Data>.get("/log")).decompressed(within: ResponseLimits())
    /// for try await chunk in response.body { print(String(buffer: chunk), terminator: "") }
    /// ```
    public func decompressed(within limits: ResponseLimits) throws -> StreamedResponse {
        guard !isContentDecoded, let contentEncoding = headers[.contentEncoding],
            try BodyDecompressor.coding(of: contentEncoding) != nil
        else { return self }
        var decoded = self
        decoded.headers[.contentEncoding] = nil
        decoded.headers[.contentLength] = nil
        decoded.body = ByteStream(DecompressedChunks(base: body, contentEncoding: contentEncoding, limits: limits))
        return decoded
    }

    /// This response with its body refused past `maxBytes`: at once when `Content-Length` says more, else as soon
    /// as the bytes read pass it (``CourierError/Code/bodyTooLarge``).
    func bounded(by maxBytes: Int) throws(CourierError) -> StreamedResponse {
        if let declared = headers[.contentLength].flatMap(Int.init), declared > maxBytes {
            throw CourierError(
                code: .bodyTooLarge,
                message: "the body of \(declared) bytes exceeds the limit of \(maxBytes) bytes"
            )
        }
        var bounded = self
        bounded.body = ByteStream(LengthBoundedChunks(base: body, maxBytes: maxBytes))
        return bounded
    }
}

extension Session {
    /// ``stream(_:)`` with the body read as ``send(_:)`` reads one: decompressed (when
    /// ``Configuration/decompressesResponses`` is on) and bounded by the session's ``Configuration/limits``.
    /// `boundsLength: false` lifts the bound on bytes for a stream meant to run on (events, JSON lines), keeping
    /// the one on the expansion ratio: what the stream readers and the OpenAPI transport use.
    package nonisolated func streamDecoded(
        _ request: Request<Data>,
        boundsLength: Bool = true
    ) async throws -> StreamedResponse {
        var response = try await stream(request)
        let configuration = currentConfiguration
        var limits = configuration.limits
        if !boundsLength { limits.maxBodyBytes = .max }
        if configuration.decompressesResponses { response = try response.decompressed(within: limits) }
        return boundsLength ? try response.bounded(by: limits.maxBodyBytes) : response
    }
}

/// A body that fails once more than `maxBytes` of it have been read.
private struct LengthBoundedChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let base: ByteStream
    let maxBytes: Int

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), maxBytes: maxBytes) }

    struct Iterator: AsyncIteratorProtocol {
        var base: ByteStream.AsyncIterator
        let maxBytes: Int
        var read = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else { return nil }
            read += chunk.readableBytes
            guard read <= maxBytes else {
                throw CourierError(code: .bodyTooLarge, message: "the body exceeds the limit of \(maxBytes) bytes")
            }
            return chunk
        }
    }
}
