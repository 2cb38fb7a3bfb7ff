import CompressNIO
import NIOCore

/// A body's chunks compressed on the fly with zlib: each input chunk goes through one streaming compressor,
/// which hands out 64 KiB pieces as they fill; the last piece comes when the input ends.
struct CompressedChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: ByteStream
    let compression: PayloadCompression

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), compression: compression) }

    struct Iterator: AsyncIteratorProtocol {
        private var base: ByteStream.AsyncIterator
        private let compression: PayloadCompression
        private var compressor: ZlibCompressor?
        private var window = ByteBufferAllocator().buffer(capacity: 64 * 1024)
        private var ready: [ByteBuffer] = []
        private var finished = false

        init(base: ByteStream.AsyncIterator, compression: PayloadCompression) {
            self.base = base
            self.compression = compression
        }

        mutating func next() async throws -> ByteBuffer? {
            while ready.isEmpty {
                if finished { return nil }
                let compressor = try self.compressor ?? makeCompressor()
                self.compressor = compressor
                let next = try await base.next()
                if let next, next.readableBytes == 0 { continue }
                var input = next ?? ByteBuffer()
                let flush: CompressNIOFlush = next == nil ? .finish : .no
                finished = next == nil
                var window = self.window
                var produced: [ByteBuffer] = []
                do {
                    try input.compressStream(with: compressor, window: &window, flush: flush) { produced.append($0) }
                } catch {
                    throw CourierError(code: .encoding, message: "could not compress the body: \(error)", underlying: error)
                }
                self.window = window
                ready.append(contentsOf: produced)
            }
            return ready.removeFirst()
        }

        private func makeCompressor() throws -> ZlibCompressor {
            do {
                return try ZlibCompressor(algorithm: compression.encoding == .gzip ? .gzip : .zlib,
                                          configuration: ZlibConfiguration(compressionLevel: Int32(compression.level)))
            } catch {
                throw CourierError(code: .encoding, message: "could not start the \(compression.encoding.rawValue) compressor: \(error)",
                                   underlying: error)
            }
        }
    }
}
