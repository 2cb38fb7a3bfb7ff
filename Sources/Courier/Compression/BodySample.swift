import NIOCore

/// The first bytes of a body, read to judge how well it compresses, and the whole body still to send.
struct BodySample {
    /// Up to the requested number of bytes from the start of the body.
    let bytes: ByteBuffer
    /// The whole body from byte 0: a fresh read for bytes and files, the peeked chunks and then the rest for a stream.
    let body: ByteStream

    /// How much of a body is compressed to judge it.
    static let size = 64 * 1024

    /// Reads up to `count` bytes from the start of `prepared`.
    static func take(_ count: Int = size, of prepared: PreparedBody) async throws -> BodySample {
        var iterator = prepared.chunks().makeAsyncIterator()
        var chunks: [ByteBuffer] = []
        var sample = ByteBuffer()
        while sample.readableBytes < count, let chunk = try await iterator.next() {
            chunks.append(chunk)
            sample.writeImmutableBuffer(
                chunk.getSlice(at: chunk.readerIndex, length: min(chunk.readableBytes, count - sample.readableBytes))
                    ?? chunk
            )
        }
        guard !prepared.isReplayable else { return BodySample(bytes: sample, body: prepared.chunks()) }
        return BodySample(bytes: sample, body: ByteStream(prefix: chunks, continuing: iterator))
    }
}
