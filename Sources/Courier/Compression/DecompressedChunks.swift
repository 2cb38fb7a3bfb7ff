import NIOCore

/// A body stream decoded chunk by chunk as it is read, in pieces of at most 64 KiB however far a chunk expands:
/// what ``StreamedResponse/decompressed(within:)`` hands on.
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
