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
    /// Whether the parser is surely inside a part's content: it has handed out content of the current part
    /// and the bytes it was last given end with no CR (every delimiter starts with CR LF).
    private var insideContent = false
    private var contentSeen = false
    private let parserDelimiterLength: Int

    /// `nil` unless `contentType` is multipart with a boundary. A body sent with a `contentEncoding` (gzip or
    /// deflate) is inflated before it is parsed.
    init?(contentType: String?, contentEncoding: String?) {
        inflater = try? BodyDecompressor(contentEncoding: contentEncoding, limits: .unbounded)
        guard let contentType, contentType.lowercased().hasPrefix("multipart/"),
              let boundary = HeaderParameters.value("boundary", in: contentType), !boundary.isEmpty else { return nil }
        parser = MultipartParser(boundary: boundary)
        parserDelimiterLength = boundary.utf8.count + 4
        parser.onHeader = { [unowned self] name, value in
            headers.append((name, value))
            if name.lowercased() == "content-type", value.lowercased().hasPrefix("application/gzip") { gunzip = GunzipDigest() }
        }
        parser.onBody = { [unowned self] chunk in
            contentSeen = true
            length += chunk.readableBytes
            chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            gunzip?.update(chunk)
        }
        parser.onPartComplete = { [unowned self] in finishPart() }
    }

    /// Hashes content the parser would only pass through: a chunk without a CR cannot hold or start a
    /// delimiter while the parser is inside a part's content. (multipart-kit scans byte by byte, which in a
    /// debug build runs at about 1 MB/s; this keeps a 1 GiB test part quick without changing what is found.)
    private func passesThrough(_ chunk: ByteBuffer) -> Bool {
        guard insideContent else { return false }
        let hasCR = chunk.withUnsafeReadableBytes { bytes in bytes.baseAddress.map { memchr($0, 13, bytes.count) != nil } ?? false }
        guard !hasCR else { return false }
        var content = chunk
        parser.onBody(&content)
        return true
    }

    /// Feeds the next bytes of the body.
    func update(_ chunk: ByteBuffer) {
        receivedBytes += chunk.readableBytes
        guard let inflater else { return parse(chunk) }
        do { parse(try inflater.decompress(chunk)) } catch { failure = "the compressed body is corrupt" }
    }

    private func parse(_ chunk: ByteBuffer) {
        guard failure == nil else { return }
        decodedBytes += chunk.readableBytes
        if passesThrough(chunk) { return }
        insideContent = false
        do { try parser.execute(chunk) } catch { failure = "the multipart body is malformed" }
        let endsWithCR = chunk.readableBytesView.suffix(parserDelimiterLength).contains(13)
        insideContent = contentSeen && !endsWithCR
    }

    /// `{"parts": [{name, filename, contentType, headers, length, sha256, decodedLength?, decodedSHA256?}],
    /// "receivedBytes": on the wire, "decodedBytes": after the content coding}`.
    func summary() -> String {
        let object: [String: Any] = failure.map { ["error": $0] } ?? ["parts": parts, "receivedBytes": receivedBytes, "decodedBytes": decodedBytes]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private func finishPart() {
        var part: [String: Any] = ["length": length, "sha256": Hex.string(hasher.finalize()),
                                   "headers": headers.map { "\($0.0): \($0.1)" }]
        for (name, value) in headers {
            switch name.lowercased() {
            case "content-disposition":
                for (key, parameter) in HeaderParameters.parse(value) where key == "name" || key == "filename" { part[key] = parameter }
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
        guard let output = try? decompressor?.decompress(chunk) else {
            decompressor = nil
            return
        }
        length += output.readableBytes
        output.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
    }

    func finish() -> (Int, String) { decompressor == nil ? (-1, "") : (length, Hex.string(hasher.finalize())) }
}

extension ResponseLimits {
    /// No size or ratio limit: the test server decodes whatever a client sent to check it.
    static let unbounded = ResponseLimits(maxBodyBytes: .max, maxDecompressionRatio: .max)
}
