import CompressNIO
import NIOCore

/// A body's chunks compressed on the fly with zlib: each input chunk goes through one streaming compressor,
/// which hands out 64 KiB pieces as they fill; the last piece comes when the input ends.
struct CompressedChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: ByteStream
    let encoding: PayloadCompression.Encoding
    let setting: ZlibSetting

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), encoding: encoding, setting: setting) }

    /// How many bytes `body` compresses to, or `nil` as soon as the output passes `limit`.
    static func size(of body: ByteStream, encoding: PayloadCompression.Encoding, setting: ZlibSetting, limit: Int64 = .max) async throws -> Int64? {
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
    }
}
