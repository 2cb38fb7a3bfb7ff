import HTTPTypes
import NIOCore

#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

extension StreamedResponse {
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
    /// ``stream(_:)`` with the body bounded as ``send(_:)`` bounds one, by the session's ``Configuration/limits``.
    /// `boundsLength: false` lifts the bound on bytes for a stream meant to run on (events, JSON lines), keeping
    /// the one on the expansion ratio: what the stream readers and the OpenAPI transport use.
    package nonisolated func streamWithinLimits(
        _ request: Request<Data>,
        boundsLength: Bool = true
    ) async throws -> StreamedResponse {
        let response = try await stream(request)
        return boundsLength ? try response.bounded(by: currentConfiguration.limits.maxBodyBytes) : response
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
