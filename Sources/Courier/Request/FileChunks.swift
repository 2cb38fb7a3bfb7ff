package import NIOCore

#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file as a sequence of ``PreparedBody/chunkSize`` chunks (1 MiB) so an upload never holds the whole
/// file in memory.
package struct FileChunks: AsyncSequence, Sendable {
    package typealias Element = ByteBuffer
    let url: URL
    var chunkSize = PreparedBody.chunkSize
    /// Where reading starts, and where it stops (`nil`: at the end of the file).
    private var range: (start: Int64, end: Int64?) = (0, nil)

    /// Reads the file at `url` (also a pipe, such as `/dev/stdin`) in chunks of ``PreparedBody/chunkSize``.
    package init(url: URL) { self.url = url }

    /// Reads bytes `start ..< end` of the regular file at `url`, and no more even when the file has grown: what
    /// resuming an upload sends.
    package init(url: URL, from start: Int64, to end: Int64) {
        self.url = url
        range = (Swift.max(0, start), Swift.max(0, end))
    }

    package func makeAsyncIterator() -> Iterator { Iterator(url: url, chunkSize: chunkSize, range: range) }

    /// The size of the file at `url` when it is a regular file this process can read; `nil` otherwise.
    package static func readableSize(of url: URL) -> Int64? {
        let path = url.path(percentEncoded: false)
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, access(path, R_OK) == 0 else { return nil }
        return Int64(status.st_size)
    }

    /// Reads with `read(2)` straight into each chunk's buffer (one copy, kernel to chunk); closes the file at
    /// the end, on an error, or when the iteration is dropped.
    package final class Iterator: AsyncIteratorProtocol {
        private let url: URL
        private let chunkSize: Int
        private let start: Int64
        /// Bytes still to read; `nil` reads to the end of the file.
        private var remaining: Int64?
        private var descriptor: Int32 = -1
        private var finished = false

        init(url: URL, chunkSize: Int, range: (start: Int64, end: Int64?)) {
            self.url = url
            self.chunkSize = chunkSize
            start = range.start
            remaining = range.end.map { Swift.max(0, $0 - range.start) }
        }

        deinit { close() }

        package func next() async throws -> ByteBuffer? {
            if finished { return nil }
            try Task.checkCancellation()
            if descriptor < 0 {
                descriptor = open(url.path(percentEncoded: false), O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { throw failure(errno) }
                if start > 0, lseek(descriptor, off_t(start), SEEK_SET) < 0 { throw failure(errno) }
            }
            let size = remaining.map { Int(Swift.min(Int64(chunkSize), $0)) } ?? chunkSize
            var buffer = ByteBufferAllocator().buffer(capacity: size)
            var readError: Int32 = 0
            while buffer.readableBytes < size {
                let wanted = size - buffer.readableBytes
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
            remaining = remaining.map { $0 - Int64(buffer.readableBytes) }
            return buffer
        }

        private func close() {
            finished = true
            if descriptor >= 0 { _ = closeDescriptor(descriptor) }
            descriptor = -1
        }

        private func failure(_ code: Int32) -> CourierError {
            close()
            return CourierError(
                code: .unreadableBody,
                message:
                    "cannot read body file \"\(CourierError.printable(url.path(percentEncoded: false)))\": \(SystemErrorText.text(of: code))"
            )
        }
    }
}

/// `close(2)`, under a name the iterator's own `close()` does not hide.
private func closeDescriptor(_ descriptor: Int32) -> Int32 { close(descriptor) }
