import CompressNIO
import Courier
import Crypto
public import NIOCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The content the test server serves, generated so tests can compute what they should receive.
public enum ServerFiles {
    /// Byte `i` of every deterministic body the server sends (`/bytes/N`, `/file/N`, `/drip`, faults).
    @inline(__always)
    public static func byte(at index: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: (index &* 31 &+ index >> 8 &+ 7) % 251)
    }

    /// `count` deterministic bytes starting at `offset`.
    public static func bytes(offset: Int, count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { pointer, initialized in
            fill(UnsafeMutableRawBufferPointer(pointer), from: offset)
            initialized = count
        }
    }

    /// `count` deterministic bytes starting at `offset`, as a buffer to send.
    static func buffer(offset: Int, count: Int) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: count)
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { pointer in
            fill(UnsafeMutableRawBufferPointer(rebasing: pointer[..<count]), from: offset)
            return count
        }
        return buffer
    }

    /// Byte `i` is `((i % 251) * 31 + c) % 251` with `c = (i >> 8 + 7) % 251`, so row `c` of this table, written
    /// twice over, holds every run of it: bytes are copied in runs of up to 251 rather than computed one by one
    /// (which a debug build does slowly enough to hold up the tests running beside it).
    private static let rows: [[UInt8]] = (0..<251).map { c in (0..<502).map { j in UInt8((j % 251 * 31 + c) % 251) } }

    /// Fills `destination` with the deterministic bytes from `offset` on.
    private static func fill(_ destination: UnsafeMutableRawBufferPointer, from offset: Int) {
        var written = 0
        while written < destination.count {
            let index = offset + written
            let run = min(256 - index & 255, 251, destination.count - written)  // one value of i >> 8, one row
            rows[(index >> 8 + 7) % 251].withUnsafeBytes { row in
                let source = UnsafeRawBufferPointer(rebasing: row[(index % 251)...])
                UnsafeMutableRawBufferPointer(rebasing: destination[written...]).copyMemory(
                    from: UnsafeRawBufferPointer(rebasing: source[..<run])
                )
            }
            written += run
        }
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
    private static let zeroMebibyte = Locked<ByteBuffer?>(nil)

    /// One MiB of zeros as a gzip member of about 1 KiB: repeated, a bomb of any size sent in flat memory.
    static func zeroMember() throws -> ByteBuffer {
        if let cached = zeroMebibyte.withLock({ $0 }) { return cached }
        var zeros = ByteBuffer(repeating: 0, count: 1 << 20)
        let compressed = try zeros.compress(with: .gzip())
        zeroMebibyte.withLock { $0 = compressed }
        return compressed
    }

    /// `mebibytes` MiB of random bytes, which do not compress, as one gzip member; empty for none.
    static func randomMember(mebibytes: Int) throws -> ByteBuffer {
        guard mebibytes > 0 else { return ByteBuffer() }
        var generator = SystemRandomNumberGenerator()
        var random = ByteBufferAllocator().buffer(capacity: mebibytes << 20)
        for _ in 0..<(mebibytes << 17) { random.writeInteger(generator.next() as UInt64) }
        return try random.compress(with: .gzip())
    }

    /// 64 MiB of zeros, gzip-compressed to about 64 KiB: a decompression bomb. Built once.
    public static func zeroBomb() throws -> ByteBuffer {
        if let cached = bomb.withLock({ $0 }) { return cached }
        var zeros = ByteBuffer(repeating: 0, count: 64 << 20)
        let compressed = try zeros.compress(with: .gzip())
        bomb.withLock { $0 = compressed }
        return compressed
    }
}
