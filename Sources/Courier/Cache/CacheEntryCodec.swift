package import Crypto
package import HTTPTypes
import NIOCore

#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// The disk store's file format for one entry:
///
/// ```
/// "CRCH" | version (1 byte) | SHA-256 of everything after it (32) | header length (UInt32) | header | body
/// ```
///
/// The header holds the key, method, URL, status, times, validators, body length, the body's encoding (raw or
/// zlib) and the headers; strings are UTF-8 with a UInt32 length, integers big-endian. Decoding checks the
/// digest first, then every length against what is left, so a truncated, flipped or foreign file is refused
/// (as ``Corrupt``) and never crashes or returns a wrong entry.
package enum CacheEntryCodec {
    /// The file is not a whole entry of this format.
    package struct Corrupt: Error {}

    static let magic: [UInt8] = Array("CRCH".utf8)
    private static let magicData = Data(magic)
    static let version: UInt8 = 1
    static let prefixLength = 4 + 1 + 32 + 4
    private static let maxFields = 10_000
    /// An age no real response has (about 31,700 years), and far inside what `Duration` can hold.
    private static let maxAgeSeconds = 1e12

    /// What a file's header says, without the body.
    package struct Header: Equatable {
        package var key: String
        var method: String
        var url: String
        var status: Int
        var storedAt: Date
        var initialAge: Duration
        var expiresAt: Date?
        package var bodyLength: Int
        var isCompressed: Bool
        package var headers: HTTPFields
        var varyingRequestHeaders: [String: String]
    }

    /// The file for `entry`, with the body compressed as `compression` decides; sealed with an HMAC under `key`
    /// when there is one, with a plain SHA-256 otherwise.
    package static func encode(
        _ entry: CacheEntry,
        compression: CacheCompression,
        key: SymmetricKey? = nil
    ) -> (file: Data, storedBodyBytes: Int, isCompressed: Bool) {
        let compressed = compression.compressIfWorthwhile(entry.body, contentType: entry.headers[.contentType])
        var header = ByteBuffer()
        for text in [entry.key, entry.method, entry.url] { write(text, to: &header) }
        header.writeInteger(UInt16(clamping: entry.status))
        header.writeInteger(entry.storedAt.timeIntervalSinceReferenceDate.bitPattern)
        header.writeInteger(entry.initialAge.seconds.bitPattern)
        header.writeInteger(UInt8(entry.expiresAt == nil ? 0 : 1))
        header.writeInteger((entry.expiresAt?.timeIntervalSinceReferenceDate ?? 0).bitPattern)
        write(entry.etag ?? "", to: &header)  // the validators, readable without parsing the headers
        write(entry.lastModified ?? "", to: &header)
        header.writeInteger(UInt64(entry.body.count))
        header.writeInteger(UInt8(compressed == nil ? 0 : 1))
        header.writeInteger(UInt32(entry.headers.count))
        for field in entry.headers {
            write(field.name.rawName, to: &header)
            write(field.value, to: &header)
        }
        header.writeInteger(UInt32(entry.varyingRequestHeaders.count))
        for (name, value) in entry.varyingRequestHeaders.sorted(by: { $0.key < $1.key }) {
            write(name, to: &header)
            write(value, to: &header)
        }
        let body = compressed ?? entry.body

        var covered = ByteBuffer()
        covered.reserveCapacity(4 + header.readableBytes + body.count)
        covered.writeInteger(UInt32(header.readableBytes))
        covered.writeImmutableBuffer(header)
        covered.writeBytes(body)
        return (sealed(covered: Data(covered.readableBytesView), key: key), body.count, compressed != nil)
    }

    /// A file of `covered`: the magic, the version and the seal of `covered`, then `covered` itself.
    package static func sealed(covered: Data, key: SymmetricKey? = nil) -> Data {
        var file = Data(capacity: prefixLength - 4 + covered.count)
        file.append(contentsOf: magic)
        file.append(version)
        file.append(seal(covered, key: key))
        file.append(covered)
        return file
    }

    /// 32 bytes: HMAC-SHA256 of `covered` under `key`, or its SHA-256 when there is no key.
    private static func seal(_ covered: Data, key: SymmetricKey?) -> Data {
        if let key { return Data(HMAC<SHA256>.authenticationCode(for: covered, using: key)) }
        return Data(SHA256.hash(data: covered))
    }

    /// The entry in `file`; throws ``Corrupt`` unless the file is whole, of this format, and sealed under `key`
    /// (a file sealed without it, or under another, is refused).
    package static func decode(_ file: Data, key: SymmetricKey? = nil) throws -> CacheEntry {
        guard file.count >= prefixLength, file.prefix(4) == magicData, file[file.startIndex + 4] == version else {
            throw Corrupt()
        }
        let digestStart = file.startIndex + 5
        let stored = file[digestStart..<(digestStart + 32)]
        let covered = file[(digestStart + 32)...]
        // Compared as `Data`, one memcmp, rather than through the generic `elementsEqual` byte by byte.
        guard seal(covered, key: key) == stored else { throw Corrupt() }
        var buffer = ByteBuffer(bytes: covered)
        let header = try readHeader(from: &buffer)
        let body = Data(buffer.readableBytesView)
        let decoded = header.isCompressed ? try CacheCompression.inflate(body, expectedLength: header.bodyLength) : body
        guard decoded.count == header.bodyLength else { throw Corrupt() }
        return CacheEntry(
            key: header.key,
            method: header.method,
            url: header.url,
            status: header.status,
            headers: header.headers,
            varyingRequestHeaders: header.varyingRequestHeaders,
            storedAt: header.storedAt,
            initialAge: header.initialAge,
            expiresAt: header.expiresAt,
            body: decoded
        )
    }

    /// The header of a file from its first bytes (at least ``prefixLength`` plus the header's length), without
    /// checking the digest: enough to rebuild an index. ``headerEnd(_:)`` says how many bytes that takes.
    package static func decodeHeader(_ start: Data) throws -> Header {
        guard start.count >= prefixLength, start.prefix(4).elementsEqual(magic), start[start.startIndex + 4] == version
        else { throw Corrupt() }
        var buffer = ByteBuffer(bytes: start[(start.startIndex + 37)...])
        return try readHeader(from: &buffer)
    }

    /// How many bytes from the start of a file hold its prefix and header, read from the prefix.
    package static func headerEnd(_ prefix: Data) throws -> Int {
        guard prefix.count >= prefixLength else { throw Corrupt() }
        var buffer = ByteBuffer(bytes: prefix[(prefix.startIndex + 37)..<(prefix.startIndex + 41)])
        guard let length = buffer.readInteger(as: UInt32.self), length < 16 << 20 else { throw Corrupt() }
        return prefixLength + Int(length)
    }

    private static func readHeader(from buffer: inout ByteBuffer) throws -> Header {
        guard let headerLength = buffer.readInteger(as: UInt32.self), Int(headerLength) <= buffer.readableBytes,
            var header = buffer.readSlice(length: Int(headerLength))
        else { throw Corrupt() }
        let key = try read(&header)
        let method = try read(&header)
        let url = try read(&header)
        guard let status = header.readInteger(as: UInt16.self),
            let storedAt = header.readInteger(as: UInt64.self).map({ Double(bitPattern: $0) }),
            let initialAge = header.readInteger(as: UInt64.self).map({ Double(bitPattern: $0) }),
            let hasExpiry = header.readInteger(as: UInt8.self),
            let expiresAt = header.readInteger(as: UInt64.self).map({ Double(bitPattern: $0) }),
            storedAt.isFinite, (0...maxAgeSeconds).contains(initialAge), expiresAt.isFinite,
            (100...999).contains(status)
        else { throw Corrupt() }
        _ = try read(&header)  // ETag and Last-Modified, also among the headers
        _ = try read(&header)
        guard let bodyLength = header.readInteger(as: UInt64.self), bodyLength < UInt64(Int.max),
            let encoding = header.readInteger(as: UInt8.self), encoding <= 1
        else { throw Corrupt() }
        var list: [HTTPField] = []
        for _ in 0..<(try count(&header)) {
            guard let name = HTTPField.Name(try read(&header)) else { throw Corrupt() }
            list.append(HTTPField(name: name, value: try read(&header)))
        }
        let fields = HTTPFields(inOrder: list)
        var varying: [String: String] = [:]
        for _ in 0..<(try count(&header)) { varying[try read(&header)] = try read(&header) }
        guard header.readableBytes == 0 else { throw Corrupt() }
        return Header(
            key: key,
            method: method,
            url: url,
            status: Int(status),
            storedAt: Date(timeIntervalSinceReferenceDate: storedAt),
            initialAge: .seconds(initialAge),
            expiresAt: hasExpiry == 1 ? Date(timeIntervalSinceReferenceDate: expiresAt) : nil,
            bodyLength: Int(bodyLength),
            isCompressed: encoding == 1,
            headers: fields,
            varyingRequestHeaders: varying
        )
    }

    private static func write(_ text: String, to buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt32(text.utf8.count))
        buffer.writeString(text)
    }

    private static func read(_ buffer: inout ByteBuffer) throws -> String {
        guard let length = buffer.readInteger(as: UInt32.self), Int(length) <= buffer.readableBytes,
            let text = buffer.readString(length: Int(length))
        else { throw Corrupt() }
        return text
    }

    private static func count(_ buffer: inout ByteBuffer) throws -> Int {
        guard let count = buffer.readInteger(as: UInt32.self), count <= maxFields else { throw Corrupt() }
        return Int(count)
    }
}
