import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Bytes in memory as chunks of at most `chunkSize` (1 MiB), each copied from the data only when it is asked for: a
/// 100 MB body streamed through a compressor never exists a second time in memory, and each chunk is a buffer
/// its reader owns alone, so it can be consumed in place.
struct DataChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let data: Data
    var chunkSize = PreparedBody.chunkSize

    func makeAsyncIterator() -> Iterator { Iterator(data: data, chunkSize: chunkSize) }

    struct Iterator: AsyncIteratorProtocol {
        let data: Data
        let chunkSize: Int
        var offset = 0

        mutating func next() async -> ByteBuffer? {
            guard offset < data.count else { return nil }
            let start = data.startIndex + offset
            let end = start + Swift.min(chunkSize, data.count - offset)
            offset = end - data.startIndex
            return ByteBuffer(bytes: data[start..<end])
        }
    }
}
