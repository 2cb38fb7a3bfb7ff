import Courier
import Crypto
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Parses a `multipart/form-data` body with ``MultipartStreamParser`` as it arrives and keeps, per part, its
/// headers, length and SHA-256 (and for a gzip part the length and SHA-256 of what it decodes to), so the server
/// can describe a 1 GiB upload without holding it.
final class MultipartDigest {
    /// What ``summary()`` writes of one part.
    private struct Part: Encodable {
        var name: String?
        var filename: String?
        var contentType: String?
        var headers: [String]
        var length: Int
        var sha256: String
        var decodedLength: Int?
        var decodedSHA256: String?
    }

    /// What ``summary()`` writes: the parts, or the error that ended the parsing.
    private struct Summary: Encodable {
        var parts: [Part]?
        var receivedBytes: Int?
        var decodedBytes: Int?
        var error: String?
    }

    private let parser: MultipartStreamParser
    private var parts: [Part] = []
    private var headers: [(String, String)] = []
    private var hasher = SHA256()
    private var length = 0
    private var gunzip: GunzipDigest?
    private var failure: String?
    private let inflater: BodyDecompressor?
    private var receivedBytes = 0
    private var decodedBytes = 0

    /// `nil` unless `contentType` is multipart with a boundary. A body sent with a `contentEncoding` (gzip or
    /// deflate) is inflated before it is parsed.
    init?(contentType: String?, contentEncoding: String?) {
        inflater = try? BodyDecompressor(contentEncoding: contentEncoding, limits: .unbounded)
        guard let contentType, contentType.lowercased().hasPrefix("multipart/"),
            let boundary = HeaderParameters.value("boundary", in: contentType), !boundary.isEmpty
        else { return nil }
        parser = MultipartStreamParser(boundary: boundary)
        parser.onHeader = { [unowned self] name, value in
            headers.append((name, value))
            if name.lowercased() == "content-type", value.lowercased().hasPrefix("application/gzip") {
                gunzip = GunzipDigest()
            }
        }
        parser.onBody = { [unowned self] chunk in
            length += chunk.readableBytes
            chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            gunzip?.update(chunk)
        }
        parser.onPartComplete = { [unowned self] in finishPart() }
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
        do { try parser.execute(chunk) } catch { failure = "the multipart body is malformed" }
    }

    /// `{"parts": [{name, filename, contentType, headers, length, sha256, decodedLength?, decodedSHA256?}],
    /// "receivedBytes": on the wire, "decodedBytes": after the content coding}`.
    func summary() -> String {
        let summary =
            failure.map { Summary(error: $0) }
            ?? Summary(parts: parts, receivedBytes: receivedBytes, decodedBytes: decodedBytes)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(summary)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private func finishPart() {
        var part = Part(
            headers: headers.map { "\($0.0): \($0.1)" },
            length: length,
            sha256: Hex.string(hasher.finalize())
        )
        for (name, value) in headers {
            switch name.lowercased() {
            case "content-disposition":
                for (key, parameter) in HeaderParameters.parse(value) {
                    if key == "name" { part.name = parameter }
                    if key == "filename" { part.filename = parameter }
                }
            case "content-type": part.contentType = value
            default: break
            }
        }
        if let gunzip {
            let (decodedLength, decodedSHA256) = gunzip.finish()
            part.decodedLength = decodedLength
            part.decodedSHA256 = decodedSHA256
        }
        parts.append(part)
        headers = []
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
