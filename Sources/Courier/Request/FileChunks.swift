package import Foundation
package import NIOCore

/// Reads a file as a sequence of ``PreparedBody/chunkSize`` chunks (1 MiB) so an upload never holds the whole
/// file in memory.
package struct FileChunks: AsyncSequence, Sendable {
    package typealias Element = ByteBuffer
    let url: URL
    var chunkSize = PreparedBody.chunkSize

    /// Reads the file at `url` (also a pipe, such as `/dev/stdin`) in chunks of ``PreparedBody/chunkSize``.
    package init(url: URL) { self.url = url }

    package func makeAsyncIterator() -> Iterator { Iterator(url: url, chunkSize: chunkSize) }

    /// The size of the file at `url` when it is a regular file this process can read; `nil` otherwise.
    static func readableSize(of url: URL) -> Int64? {
        let path = url.path(percentEncoded: false)
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            (attributes[.type] as? FileAttributeType) == .typeRegular,
            let size = (attributes[.size] as? NSNumber)?.int64Value,
            FileManager.default.isReadableFile(atPath: path)
        else { return nil }
        return size
    }

    /// Reads with `read(2)` straight into each chunk's buffer (one copy, kernel to chunk); closes the file at
    /// the end, on an error, or when the iteration is dropped.
    package final class Iterator: AsyncIteratorProtocol {
        private let url: URL
        private let chunkSize: Int
        private var descriptor: Int32 = -1
        private var finished = false

        init(url: URL, chunkSize: Int) {
            self.url = url
            self.chunkSize = chunkSize
        }

        deinit { close() }

        package func next() async throws -> ByteBuffer? {
            if finished { return nil }
            try Task.checkCancellation()
            if descriptor < 0 {
                descriptor = open(url.path(percentEncoded: false), O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { throw failure(errno) }
            }
            var buffer = ByteBufferAllocator().buffer(capacity: chunkSize)
            var readError: Int32 = 0
            while buffer.readableBytes < chunkSize {
                let wanted = chunkSize - buffer.readableBytes
                let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 0) { space -> Int in
                    let want = Swift.min(space.count, wanted)
                    var result: Int
                    repeat { result = read(descriptor, space.baseAddress, want) } while result < 0 && errno == EINTR
                    if result < 0 { readError = errno }
                    return Swift.max(0, result)
                }
                if readError != 0 { throw failure(readError) }
                if count == 0 { break }
            }
            guard buffer.readableBytes > 0 else {
                close()
                return nil
            }
            return buffer
        }

        private func close() {
            finished = true
            if descriptor >= 0 { _ = Foundation.close(descriptor) }
            descriptor = -1
        }

        private func failure(_ code: Int32) -> CourierError {
            close()
            return CourierError(
                code: .fileAccess,
                message:
                    "cannot read body file \"\(CourierError.printable(url.path(percentEncoded: false)))\": \(String(cString: strerror(code)))"
            )
        }
    }
}
