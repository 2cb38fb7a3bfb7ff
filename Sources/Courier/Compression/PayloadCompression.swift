/// How a request body is compressed before it is sent with `Content-Encoding` (WYNetwork compressed images
/// before upload with three algorithms and a floor; Courier compresses any payload with zlib). Apply it with
/// ``Request/compressingBody(_:)``.
///
/// ```swift
/// let request = try await Request<Data>.post("/logs", body: .file(log)).compressingBody(.adaptive())
/// ```
///
/// The compressed body is streamed, so its length is not known up front and it goes with chunked transfer
/// encoding. Nothing shorter than ``minimumBytes`` is compressed (WYNetwork's floor was 150 KB).
public struct PayloadCompression: Sendable, Hashable {
    /// The content coding.
    public enum Encoding: String, Sendable, Hashable, CaseIterable {
        /// `gzip` (RFC 1952).
        case gzip
        /// `deflate`, which HTTP defines as the zlib format (RFC 1950).
        case deflate
    }

    /// How the zlib setting is chosen for a body.
    public enum Strategy: Sendable, Hashable {
        /// Always this level, 1 (fastest) to 9 (smallest).
        case fixed(level: Int)
        /// Skip content types that are compressed already and bodies whose first 64 KiB shrink by less than
        /// 10 %; otherwise pick the level by size: 9 below 1 MiB, 6 below 32 MiB, 1 above (and for unknown lengths).
        case adaptive
        /// The fastest setting whose output fits in this many bytes, tried from the fastest to the smallest
        /// (see ``ZlibSetting``). A body that already fits is sent as it is, even below the floor;
        /// ``CourierError/Code/compressionTarget`` when no setting fits. Needs a body that can be read twice
        /// (bytes or a file, a form without streamed parts), since every candidate is measured before sending.
        case targetSize(Int64)
    }

    /// The content coding.
    public var encoding: Encoding
    /// How the level is chosen.
    public var strategy: Strategy
    /// Bodies shorter than this are sent uncompressed; a body of unknown length is always compressed (the
    /// ``Strategy/targetSize(_:)`` strategy ignores the floor, its budget decides).
    public var minimumBytes: Int64

    /// Creates a compression setting.
    public init(encoding: Encoding = .gzip, strategy: Strategy = .fixed(level: 6), minimumBytes: Int64 = 150 * 1024) {
        self.encoding = encoding
        self.strategy = strategy
        self.minimumBytes = max(0, minimumBytes)
    }

    /// gzip at `level` (clamped to 1…9).
    public static func gzip(level: Int = 6, minimumBytes: Int64 = 150 * 1024) -> PayloadCompression {
        PayloadCompression(encoding: .gzip, strategy: .fixed(level: level), minimumBytes: minimumBytes)
    }

    /// deflate (zlib format) at `level` (clamped to 1…9).
    public static func deflate(level: Int = 6, minimumBytes: Int64 = 150 * 1024) -> PayloadCompression {
        PayloadCompression(encoding: .deflate, strategy: .fixed(level: level), minimumBytes: minimumBytes)
    }

    /// The ``Strategy/adaptive`` strategy.
    public static func adaptive(_ encoding: Encoding = .gzip, minimumBytes: Int64 = 150 * 1024) -> PayloadCompression {
        PayloadCompression(encoding: encoding, strategy: .adaptive, minimumBytes: minimumBytes)
    }

    /// The ``Strategy/targetSize(_:)`` strategy.
    public static func targetSize(_ bytes: Int64, encoding: Encoding = .gzip) -> PayloadCompression {
        PayloadCompression(encoding: encoding, strategy: .targetSize(bytes))
    }

    /// The level ``Strategy/adaptive`` uses for a body of `length` bytes (`nil`: unknown).
    static func adaptiveLevel(forLength length: Int64?) -> Int {
        guard let length else { return 1 }
        return length < 1 << 20 ? 9 : length < 32 << 20 ? 6 : 1
    }

    /// A sample shrinking by less than this factor is judged not worth compressing.
    static let worthwhileRatio = 1.1
}
