import Courier
import CompressNIO
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
    private let inflater: StreamInflater?
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
        inflater = contentEncoding.flatMap(StreamInflater.init(coding:))
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
        inflater.inflate(chunk) { parse($0) }
        if inflater.isCorrupt { failure = "the compressed body is corrupt" }
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

/// Inflates a gzip or zlib stream chunk by chunk, handing out what it decodes; `isCorrupt` once it fails.
final class StreamInflater {
    private let decompressor: ZlibDecompressor?
    private var output = ByteBufferAllocator().buffer(capacity: 256 * 1024)
    private(set) var isCorrupt = false

    /// `nil` unless `coding` is gzip, x-gzip or deflate.
    init?(coding: String) {
        switch coding.lowercased() {
        case "gzip", "x-gzip", "application/gzip": decompressor = try? ZlibDecompressor(algorithm: .gzip)
        case "deflate": decompressor = try? ZlibDecompressor(algorithm: .zlib)
        default: return nil
        }
    }

    func inflate(_ chunk: ByteBuffer, _ deliver: (ByteBuffer) -> Void) {
        guard !isCorrupt, let decompressor else { isCorrupt = true; return }
        var input = chunk
        var more = true
        while more {
            output.clear()
            more = false
            do {
                try decompressor.inflate(from: &input, to: &output)
            } catch let error as CompressNIOError where error == .bufferOverflow {
                more = true  // the output filled: inflate again
            } catch let error as CompressNIOError where error == .inputBufferOverflow {
                // the input ran out: wait for the next chunk
            } catch {
                isCorrupt = true
                return
            }
            if output.readableBytes > 0 { deliver(output) }
            if input.readableBytes > 0, output.readableBytes > 0 { more = true }
        }
    }
}

/// The length and SHA-256 of what a gzip stream decodes to; length -1 when it is corrupt.
final class GunzipDigest {
    private let inflater = StreamInflater(coding: "gzip")
    private var hasher = SHA256()
    private var length = 0

    func update(_ chunk: ByteBuffer) {
        inflater?.inflate(chunk) { output in
            length += output.readableBytes
            output.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        }
    }

    func finish() -> (Int, String) { inflater?.isCorrupt ?? true ? (-1, "") : (length, Hex.string(hasher.finalize())) }
}
