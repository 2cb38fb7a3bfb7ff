import HTTPTypes
import NIOCore

/// A body stream decoded chunk by chunk as it is read, in pieces of at most 64 KiB however far a chunk expands:
/// a streamed answer's body as ``Session/stream(_:)`` hands it on.
/// The end of the stream is checked, so a body cut short in its compressed stream fails rather than ending early.
struct DecompressedChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let base: ByteStream
    let contentEncoding: String
    let limits: ResponseLimits

    func makeAsyncIterator() -> Iterator {
        Iterator(
            base: base.makeAsyncIterator(),
            decoder: Result { try BodyDecompressor(contentEncoding: contentEncoding, limits: limits) }
        )
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: ByteStream.AsyncIterator
        /// Made when the iteration starts, since the decoder holds zlib's state; the coding was checked when the
        /// sequence was made, so a failure here is zlib's own.
        let decoder: Result<BodyDecompressor?, any Error>

        mutating func next() async throws -> ByteBuffer? {
            guard let decoder = try decoder.get() else { return try await base.next() }
            while true {
                if let decoded = try decoder.nextOutput() { return decoded }
                guard let chunk = try await base.next() else { break }
                decoder.feed(chunk)
            }
            try decoder.finish()
            return nil
        }
    }
}

/// How a streamed body is decoded: its coding and the limits its decoding keeps to.
struct StreamDecoding: Sendable {
    let contentEncoding: String
    let limits: ResponseLimits

    /// The decoding of `response`, the answer to `sent`, under `configuration`: `nil` when there is nothing to
    /// decode (no coding Courier decodes, a body the transport decoded, a HEAD, 204 or 304). The ratio bound is the
    /// session's; there is no bound on bytes, since a stream may run on.
    init?(_ response: TransportResponse, sent: PreparedRequest, configuration: Configuration) {
        guard configuration.decompressesResponses, !response.isContentDecoded, sent.method != .head,
            response.status.code != 204, response.status.code != 304,
            let coding = response.headers[.contentEncoding]
        else { return nil }
        let decodable: Bool
        do { decodable = try BodyDecompressor.coding(of: coding) != nil } catch {
            decodable = true  // stacked codings: the body fails with the reason as it is read
        }
        guard decodable else { return nil }
        contentEncoding = coding
        limits = ResponseLimits(copying: configuration.limits, maxBodyBytes: .max)
    }
}

/// A sink that decodes each chunk before it hands it on, as ``DecompressedChunks`` does for a body read as a
/// sequence; ``finish()`` checks the compressed stream ended.
///
/// `@unchecked Sendable`: the session calls a sink from one exchange at a time, one call after another
/// (``ResponseSink``'s promise), so its decoder is never used from two threads at once.
final class DecodingSink: ResponseSink, @unchecked Sendable {
    private let base: any ResponseSink
    private let decoder: BodyDecompressor?

    init(_ base: any ResponseSink, decoding: StreamDecoding) throws {
        self.base = base
        decoder = try BodyDecompressor(contentEncoding: decoding.contentEncoding, limits: decoding.limits)
    }

    func head(_ response: StreamedResponse) throws { try base.head(response) }

    func write(_ chunk: ByteBuffer) throws {
        guard let decoder else { return try base.write(chunk) }
        try decoder.decompress(chunk) { try base.write($0) }
    }

    func finish() throws { try decoder?.finish() }
}
