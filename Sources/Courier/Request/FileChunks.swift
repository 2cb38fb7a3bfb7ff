import Foundation
import NIOCore

/// Reads a file as a sequence of chunks so an upload never holds the whole file in memory.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let url: URL
    var chunkSize = 64 * 1024

    func makeAsyncIterator() -> Iterator { Iterator(url: url, chunkSize: chunkSize) }

    /// The size of the file at `url` when it is a regular file this process can read; `nil` otherwise.
    static func readableSize(of url: URL) -> Int64? {
        let path = url.path(percentEncoded: false)
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
              (attributes[.type] as? FileAttributeType) == .typeRegular,
              let size = (attributes[.size] as? NSNumber)?.int64Value,
              FileManager.default.isReadableFile(atPath: path) else { return nil }
        return size
    }

    final class Iterator: AsyncIteratorProtocol {
        private let url: URL
        private let chunkSize: Int
        private var handle: FileHandle?
        private var finished = false

        init(url: URL, chunkSize: Int) {
            self.url = url
            self.chunkSize = chunkSize
        }

        deinit { try? handle?.close() }

        func next() async throws -> ByteBuffer? {
            if finished { return nil }
            try Task.checkCancellation()
            do {
                if handle == nil { handle = try FileHandle(forReadingFrom: url) }
                guard let data = try handle?.read(upToCount: chunkSize), !data.isEmpty else {
                    finished = true
                    try? handle?.close()
                    handle = nil
                    return nil
                }
                return ByteBuffer(bytes: data)
            } catch {
                finished = true
                throw CourierError(code: .fileAccess,
                                   message: "cannot read body file \"\(CourierError.printable(url.path(percentEncoded: false)))\"",
                                   underlying: error)
            }
        }
    }
}
