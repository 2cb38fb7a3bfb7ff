public import Foundation
import Courier
import CompressNIO
import Crypto
public import NIOCore

/// The content the test server serves, generated so tests can compute what they should receive.
public enum ServerFiles {
    /// Byte `i` of every deterministic body the server sends (`/bytes/N`, `/file/N`, `/drip`, faults).
    @inline(__always)
    public static func byte(at index: Int) -> UInt8 { UInt8(truncatingIfNeeded: (index &* 31 &+ index >> 8 &+ 7) % 251) }

    /// `count` deterministic bytes starting at `offset`.
    public static func bytes(offset: Int, count: Int) -> [UInt8] {
        (offset..<offset + count).map(byte(at:))
    }

    /// `count` deterministic bytes starting at `offset`, as a buffer to send.
    static func buffer(offset: Int, count: Int) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: count)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
            for index in 0..<count { pointer[index] = byte(at: offset + index) }
            return count
        }
        return buffer
    }

    /// The SHA-256 (hex) of the first `count` deterministic bytes, computed in chunks.
    public static func sha256(count: Int) -> String {
        var hasher = SHA256()
        var offset = 0
        while offset < count {
            let size = min(1 << 20, count - offset)
            hasher.update(data: bytes(offset: offset, count: size))
            offset += size
        }
        return Hex.string(hasher.finalize())
    }

    /// The deterministic bytes as `Data`.
    public static func data(offset: Int = 0, count: Int) -> Data { Data(bytes(offset: offset, count: count)) }

    /// The 1 KiB body of `/small`.
    static let small = ByteBuffer(string: String(repeating: "courier-", count: 128))

    /// The 1 KiB body of `/small`, as a test compares it with what it received.
    public static var smallData: Data { Data(small.readableBytesView) }

    /// A JSON document of `items` objects, compressible the way API answers are.
    public static func jsonDocument(items: Int) -> String {
        let rows = (0..<items).map { "{\"id\":\($0),\"name\":\"item \($0)\",\"active\":\($0 % 2 == 0)}" }
        return "{\"count\":\(items),\"items\":[\(rows.joined(separator: ","))]}"
    }

    private static let bomb = Locked<ByteBuffer?>(nil)

    /// 64 MiB of zeros, gzip-compressed to about 64 KiB: a decompression bomb. Built once.
    public static func zeroBomb() throws -> ByteBuffer {
        if let cached = bomb.withLock({ $0 }) { return cached }
        var zeros = ByteBuffer(repeating: 0, count: 64 << 20)
        let compressed = try zeros.compress(with: .gzip())
        bomb.withLock { $0 = compressed }
        return compressed
    }
}
