import HTTPTypes

/// How a request body is compressed before it is sent with `Content-Encoding` (WYNetwork compressed images
/// before upload; Courier compresses any payload with zlib). Apply it with ``Request/compressingBody(_:)``.
///
/// Bodies shorter than ``minimumBytes`` (WYNetwork's floor was 150 KB) go as they are. The compressed body is
/// streamed, so its length is not known up front and it is sent with chunked transfer encoding.
public struct PayloadCompression: Sendable, Hashable {
    /// The content coding.
    public enum Encoding: String, Sendable, Hashable, CaseIterable {
        /// `gzip` (RFC 1952).
        case gzip
        /// `deflate`, which HTTP defines as the zlib format (RFC 1950).
        case deflate
    }

    /// The content coding.
    public var encoding: Encoding
    /// The zlib level, 1 (fastest) to 9 (smallest).
    public var level: Int
    /// Bodies shorter than this are sent uncompressed; a body of unknown length is always compressed.
    public var minimumBytes: Int64

    /// Creates a compression setting; the level is clamped to 1…9.
    public init(encoding: Encoding, level: Int = 6, minimumBytes: Int64 = 150 * 1024) {
        self.encoding = encoding
        self.level = max(1, min(9, level))
        self.minimumBytes = max(0, minimumBytes)
    }

    /// gzip at `level`.
    public static func gzip(level: Int = 6, minimumBytes: Int64 = 150 * 1024) -> PayloadCompression {
        PayloadCompression(encoding: .gzip, level: level, minimumBytes: minimumBytes)
    }

    /// deflate (zlib format) at `level`.
    public static func deflate(level: Int = 6, minimumBytes: Int64 = 150 * 1024) -> PayloadCompression {
        PayloadCompression(encoding: .deflate, level: level, minimumBytes: minimumBytes)
    }
}

extension Request {
    /// This request with its body compressed as `compression` says and `Content-Encoding` set, unless the body
    /// is shorter than ``PayloadCompression/minimumBytes`` or already has a content coding. The body is read
    /// and compressed chunk by chunk while it is sent (a file is never loaded whole).
    ///
    /// Throws ``CourierError/Code/fileAccess`` for an unreadable body file.
    public func compressingBody(_ compression: PayloadCompression) throws -> Self {
        guard !body.isEmpty, headers[.contentEncoding] == nil,
              !rawHeaders.contains(where: { $0.name.lowercased() == "content-encoding" }) else { return self }
        let prepared = try body.prepare()
        if let length = prepared.length, length < compression.minimumBytes { return self }
        var compressed = self
        compressed.body = .stream(CompressedChunks(base: prepared.chunks(), compression: compression), length: nil,
                                  contentType: body.contentType)
        compressed.headers[.contentEncoding] = compression.encoding.rawValue
        return compressed
    }
}
