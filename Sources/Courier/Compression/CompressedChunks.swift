import CompressNIO
import NIOCore

/// A body's chunks compressed on the fly with zlib: each input chunk goes through one streaming compressor,
/// which hands out 64 KiB pieces as they fill; the last piece comes when the input ends.
struct CompressedChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: ByteStream
    let encoding: PayloadCompression.Encoding
    let setting: ZlibSetting

    func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator(), encoding: encoding, setting: setting)
    }

    /// How many bytes `body` compresses to, or `nil` as soon as the output passes `limit`.
    static func size(
        of body: ByteStream,
        encoding: PayloadCompression.Encoding,
        setting: ZlibSetting,
        limit: Int64 = .max
    ) async throws -> Int64? {
        var total: Int64 = 0
        for try await piece in CompressedChunks(base: body, encoding: encoding, setting: setting) {
            total += Int64(piece.readableBytes)
            if total > limit { return nil }
        }
        return total
    }

    struct Iterator: AsyncIteratorProtocol {
        private var base: ByteStream.AsyncIterator
        private let encoding: PayloadCompression.Encoding
        private let setting: ZlibSetting
        private var compressor: ZlibCompressor?
        private var window = ByteBufferAllocator().buffer(capacity: 64 * 1024)
        private var ready: [ByteBuffer] = []
        private var finished = false
        /// The rest of the current input chunk, fed to zlib a piece at a time.
        private var pending = ByteBuffer()
        /// What zlib reads next, in a buffer only this iterator holds: a chunk of at most `PreparedBody.chunkSize` (1 MiB) as it came
        /// (bytes and files arrive as fresh buffers, so no copy), or a copied piece of a larger one, so zlib never
        /// triggers a copy-on-write of a whole chunk held elsewhere (a 100 MB body would be copied whole), and
        /// output starts after the first piece.
        private var piece = ByteBufferAllocator().buffer(capacity: PreparedBody.chunkSize)

        init(base: ByteStream.AsyncIterator, encoding: PayloadCompression.Encoding, setting: ZlibSetting) {
            self.base = base
            self.encoding = encoding
            self.setting = setting
        }

        mutating func next() async throws -> ByteBuffer? {
            while ready.isEmpty {
                if finished { return nil }
                let compressor = try self.compressor ?? setting.compressor(for: encoding)
                self.compressor = compressor
                if pending.readableBytes == 0 {
                    guard let next = try await base.next() else {
                        finished = true
                        piece.clear()
                        try compress(with: compressor, flush: .finish)
                        continue
                    }
                    pending = next
                    if pending.readableBytes == 0 { continue }
                }
                if pending.readableBytes <= PreparedBody.chunkSize {
                    // a whole chunk: zlib reads it in place (copied first only if another holder shares it)
                    swap(&piece, &pending)
                    pending.clear()
                } else {
                    piece.clear()
                    if let slice = pending.readSlice(length: PreparedBody.chunkSize) {
                        piece.writeImmutableBuffer(slice)
                    }
                }
                try compress(with: compressor, flush: .no)
            }
            return ready.removeFirst()
        }

        /// Runs ``piece`` through zlib, collecting the output windows in ``ready``.
        private mutating func compress(with compressor: ZlibCompressor, flush: CompressNIOFlush) throws {
            var produced: [ByteBuffer] = []
            do {
                try piece.compressStream(with: compressor, window: &window, flush: flush) { produced.append($0) }
            } catch {
                throw CourierError(code: .encoding, message: "could not compress the body: \(error)", underlying: error)
            }
            ready.append(contentsOf: produced)
        }
    }
}
