import CompressNIO
import NIOCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// How the disk store compresses bodies with zlib. Bodies that would not shrink are stored as they are: small
/// ones, already-compressed content types, and those whose first 64 KiB compress poorly.
public struct CacheCompression: Sendable, Hashable {
    /// The zlib level, 1 (fastest) to 9 (smallest); 0 stores every body uncompressed. Default 6.
    public var level: Int
    /// Bodies shorter than this are stored uncompressed (default 256 bytes).
    public var minimumBytes: Int
    /// A body is stored uncompressed unless a sample shrinks by at least this factor (default 1.1).
    public var minimumRatio: Double

    /// How much of a large body is compressed first to judge whether compressing it pays.
    static let sampleBytes = 64 * 1024

    /// Creates settings; `level` is clamped to 0…9.
    public init(level: Int = 6, minimumBytes: Int = 256, minimumRatio: Double = 1.1) {
        self.level = min(9, max(0, level))
        self.minimumBytes = minimumBytes
        self.minimumRatio = minimumRatio
    }

    /// Stores every body as it is.
    public static let none = CacheCompression(level: 0)

    /// `body` in the zlib format at ``level``, or `nil` when compressing it does not pay: below ``minimumBytes``,
    /// an already-compressed `contentType`, or a first 64 KiB (or the whole) that shrinks less than
    /// ``minimumRatio``. The disk store's path, public so it can be measured and reused.
    public func compressIfWorthwhile(_ body: Data, contentType: String? = nil) -> Data? {
        guard level > 0, body.count >= minimumBytes, !CompressedContentTypes.contains(contentType) else { return nil }
        if body.count > Self.sampleBytes {
            guard let sample = try? Self.deflate(body.prefix(Self.sampleBytes), level: 1),
                Double(Self.sampleBytes) / Double(max(1, sample.count)) >= minimumRatio
            else { return nil }
        }
        guard let compressed = try? Self.deflate(body, level: level),
            Double(body.count) / Double(max(1, compressed.count)) >= minimumRatio
        else { return nil }
        return compressed
    }

    /// `data` in the zlib format, in one pass into a buffer of zlib's worst-case size.
    static func deflate(_ data: Data, level: Int) throws -> Data {
        var input = ByteBuffer(bytes: data)
        let compressor = try ZlibCompressor(
            algorithm: .zlib,
            configuration: ZlibConfiguration(compressionLevel: Int32(min(9, max(1, level))))
        )
        var output = ByteBufferAllocator().buffer(capacity: compressor.maxSize(from: input))
        try compressor.deflate(from: &input, to: &output, flush: .finish)
        return Data(output.readableBytesView)
    }

    /// The `expectedLength` bytes `data` inflates to; throws when it is corrupt or inflates to another length.
    ///
    /// `expectedLength` comes from the file, so it is checked before anything is allocated for it: deflate
    /// cannot expand data more than about 1032 times, and a `ByteBuffer` holds at most 4 GiB.
    static func inflate(_ data: Data, expectedLength: Int) throws -> Data {
        guard expectedLength >= 0, expectedLength / 1032 <= data.count, expectedLength < Int(UInt32.max) else {
            throw CacheEntryCodec.Corrupt()
        }
        var input = ByteBuffer(bytes: data)
        let decompressor = try ZlibDecompressor(algorithm: .zlib)
        var output = ByteBufferAllocator().buffer(capacity: expectedLength + 1)
        try decompressor.inflate(from: &input, to: &output)
        guard output.readableBytes == expectedLength, input.readableBytes == 0 else { throw CacheEntryCodec.Corrupt() }
        return Data(output.readableBytesView)
    }
}
