import CompressNIO

/// One way to run zlib: a level and a strategy. ``PayloadCompression`` picks one per body.
public struct ZlibSetting: Sendable, Hashable, CustomStringConvertible {
    /// zlib's strategies, as its `deflateInit2` takes them.
    public enum Strategy: String, Sendable, Hashable {
        /// Normal LZ77 plus Huffman coding.
        case `default`
        /// Tuned for data of small values with a somewhat random distribution.
        case filtered
        /// Run-length matches only: fast, fine for images and repetitive bytes.
        case rle
        /// Huffman coding only, no string matching: the fastest, the weakest.
        case huffmanOnly
    }

    /// 1 (fastest) to 9 (smallest).
    public let level: Int
    /// The zlib strategy.
    public let strategy: Strategy

    /// A setting; `level` is clamped to 1…9.
    public init(level: Int, strategy: Strategy = .default) {
        self.level = max(1, min(9, level))
        self.strategy = strategy
    }

    /// `level 6` or `level 1 rle`.
    public var description: String { strategy == .default ? "level \(level)" : "level \(level) \(strategy.rawValue)" }

    /// The settings ``PayloadCompression/Strategy/targetSize(_:)`` tries, from the fastest to the smallest output.
    static let fastestFirst: [ZlibSetting] = [
        ZlibSetting(level: 1, strategy: .huffmanOnly), ZlibSetting(level: 1, strategy: .rle),
        ZlibSetting(level: 1), ZlibSetting(level: 3), ZlibSetting(level: 6), ZlibSetting(level: 9),
        ZlibSetting(level: 9, strategy: .filtered),
    ]

    /// A compressor for `encoding` with this setting; throws ``CourierError/Code/encoding`` when zlib refuses.
    func compressor(for encoding: PayloadCompression.Encoding) throws -> ZlibCompressor {
        let zlibStrategy: ZlibConfiguration.Strategy =
            switch strategy {
            case .default: .default
            case .filtered: .filtered
            case .rle: .rle
            case .huffmanOnly: .huffmanOnly
            }
        do {
            return try ZlibCompressor(
                algorithm: encoding == .gzip ? .gzip : .zlib,
                configuration: ZlibConfiguration(compressionLevel: Int32(level), strategy: zlibStrategy)
            )
        } catch {
            throw CourierError(
                code: .encoding,
                message: "could not start the \(encoding.rawValue) compressor: \(error)",
                underlying: error
            )
        }
    }
}
