import Courier
import Crypto
import Foundation
import MultipartKit
import NIOCore

/// Parses a `multipart/form-data` body with multipart-kit's streaming parser as it arrives and keeps, per part,
/// its headers, length and SHA-256 (and for a gzip part the length and SHA-256 of what it decodes to), so the
/// server can describe a 1 GiB upload without holding it.
final class MultipartDigest {
    private let parser: MultipartParser
    private var parts: [[String: Any]] = []
    private var headers: [(String, String)] = []
    private var hasher = SHA256()
    private var length = 0
    private var gunzip: GunzipDigest?
    private var failure: String?
    private let inflater: BodyDecompressor?
    private var receivedBytes = 0
    private var decodedBytes = 0
    /// Whether the parser is surely inside a part's content: it has handed out content of the current part, and
    /// the body's last bytes hold neither the start of a delimiter nor a whole one the parser has not yet ended
    /// the part on (it does when it reads the `--` or CR LF after it).
    private var insideContent = false
    /// The body's last bytes, across chunks: a delimiter and a few more.
    private var tail: [UInt8] = []
    private var contentSeen = false
    /// CR LF `--` boundary: what ends a part's content.
    private let delimiter: [UInt8]

    /// `nil` unless `contentType` is multipart with a boundary. A body sent with a `contentEncoding` (gzip or
    /// deflate) is inflated before it is parsed.
    init?(contentType: String?, contentEncoding: String?) {
        inflater = try? BodyDecompressor(contentEncoding: contentEncoding, limits: .unbounded)
        guard let contentType, contentType.lowercased().hasPrefix("multipart/"),
            let boundary = HeaderParameters.value("boundary", in: contentType), !boundary.isEmpty
        else { return nil }
        parser = MultipartParser(boundary: boundary)
        delimiter = Array("\r\n--\(boundary)".utf8)
        parser.onHeader = { [unowned self] name, value in
            headers.append((name, value))
            if name.lowercased() == "content-type", value.lowercased().hasPrefix("application/gzip") {
                gunzip = GunzipDigest()
            }
        }
        parser.onBody = { [unowned self] chunk in
            contentSeen = true
            length += chunk.readableBytes
            chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            gunzip?.update(chunk)
        }
        parser.onPartComplete = { [unowned self] in finishPart() }
    }

    /// While the parser is inside a part's content, hands it the content up to the next delimiter (or up to a
    /// tail that may begin one) directly, and returns what the parser must still read. multipart-kit scans byte
    /// by byte, which in a debug build runs at about 1 MB/s; content passes here at memory speed, and the parser
    /// still reads every delimiter and header, so what is found does not change.
    private func passThrough(_ chunk: ByteBuffer) -> ByteBuffer {
        guard insideContent else { return chunk }
        let contentLength = chunk.withUnsafeReadableBytes { bytes in
            delimiter.withUnsafeBytes { delimiter in Self.contentLength(of: bytes, before: delimiter) }
        }
        var rest = chunk
        guard contentLength > 0, var content = rest.readSlice(length: contentLength) else { return chunk }
        parser.onBody(&content)
        return rest
    }

    /// Keeps the body's last bytes in ``tail``. (Through raw bytes: `ByteBufferView.suffix` walks the whole
    /// chunk, which in a debug build cost more than the parsing this file saves.)
    private func keepTail(of chunk: ByteBuffer) {
        let keep = delimiter.count + 8
        chunk.withUnsafeReadableBytes { bytes in
            tail = bytes.count >= keep ? Array(bytes[(bytes.count - keep)...]) : Array((tail + bytes).suffix(keep))
        }
    }

    /// How many bytes of `bytes` come before the first whole `delimiter`, or else before the tail that could be
    /// the start of one.
    private static func contentLength(of bytes: UnsafeRawBufferPointer, before delimiter: UnsafeRawBufferPointer) -> Int
    {
        guard let base = bytes.baseAddress, let pattern = delimiter.baseAddress else { return 0 }
        var start = 0
        // every delimiter starts with CR
        while start < bytes.count, let cr = memchr(base + start, 13, bytes.count - start) {
            let position = base.distance(to: UnsafeRawPointer(cr))
            if memcmp(cr, pattern, min(delimiter.count, bytes.count - position)) == 0 { return position }
            start = position + 1
        }
        return bytes.count
    }

    /// Feeds the next bytes of the body.
    func update(_ chunk: ByteBuffer) {
        receivedBytes += chunk.readableBytes
        guard let inflater else { return parse(chunk) }
        do { try inflater.decompress(chunk) { parse($0) } } catch { failure = "the compressed body is corrupt" }
    }

    private func parse(_ chunk: ByteBuffer) {
        guard failure == nil else { return }
        decodedBytes += chunk.readableBytes
        keepTail(of: chunk)
        let rest = passThrough(chunk)
        guard rest.readableBytes > 0 else { return }
        insideContent = false
        do { try parser.execute(rest) } catch { failure = "the multipart body is malformed" }
        // A delimiter, or the start of one, near the end: the next bytes go to the parser whole.
        let tailIsContent = tail.withUnsafeBytes { bytes in
            delimiter.withUnsafeBytes { delimiter in Self.contentLength(of: bytes, before: delimiter) == bytes.count }
        }
        insideContent = contentSeen && tailIsContent
    }

    /// `{"parts": [{name, filename, contentType, headers, length, sha256, decodedLength?, decodedSHA256?}],
    /// "receivedBytes": on the wire, "decodedBytes": after the content coding}`.
    func summary() -> String {
        let object: [String: Any] =
            failure.map { ["error": $0] } ?? [
                "parts": parts, "receivedBytes": receivedBytes, "decodedBytes": decodedBytes,
            ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private func finishPart() {
        var part: [String: Any] = [
            "length": length, "sha256": Hex.string(hasher.finalize()),
            "headers": headers.map { "\($0.0): \($0.1)" },
        ]
        for (name, value) in headers {
            switch name.lowercased() {
            case "content-disposition":
                for (key, parameter) in HeaderParameters.parse(value) where key == "name" || key == "filename" {
                    part[key] = parameter
                }
            case "content-type": part["contentType"] = value
            default: break
            }
        }
        if let gunzip {
            let (decodedLength, decodedSHA256) = gunzip.finish()
            part["decodedLength"] = decodedLength
            part["decodedSHA256"] = decodedSHA256
        }
        parts.append(part)
        headers = []
        contentSeen = false
        hasher = SHA256()
        length = 0
        gunzip = nil
    }
}

/// The length and SHA-256 of what a gzip stream decodes to; length -1 when it is corrupt.
final class GunzipDigest {
    private var decompressor = try? BodyDecompressor(contentEncoding: "gzip", limits: .unbounded)
    private var hasher = SHA256()
    private var length = 0

    func update(_ chunk: ByteBuffer) {
        do {
            try decompressor?.decompress(chunk) { output in
                length += output.readableBytes
                output.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            }
        } catch {
            decompressor = nil
        }
    }

    func finish() -> (Int, String) { decompressor == nil ? (-1, "") : (length, Hex.string(hasher.finalize())) }
}

extension ResponseLimits {
    /// No size or ratio limit: the test server decodes whatever a client sent to check it.
    static let unbounded = ResponseLimits(maxBodyBytes: .max, maxDecompressionRatio: .max)
}
