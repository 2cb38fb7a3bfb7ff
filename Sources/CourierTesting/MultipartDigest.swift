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

    /// `nil` unless `contentType` is multipart with a boundary.
    init?(contentType: String?) {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/"),
              let range = contentType.range(of: "boundary=") else { return nil }
        let boundary = String(contentType[range.upperBound...].prefix { $0 != ";" }).trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        guard !boundary.isEmpty else { return nil }
        parser = MultipartParser(boundary: boundary)
        parser.onHeader = { [unowned self] name, value in
            headers.append((name, value))
            if name.lowercased() == "content-type", value.lowercased().hasPrefix("application/gzip") { gunzip = GunzipDigest() }
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
        guard failure == nil else { return }
        do { try parser.execute(chunk) } catch { failure = "the multipart body is malformed" }
    }

    /// `{"parts": [{name, filename, contentType, headers, length, sha256, decodedLength?, decodedSHA256?}]}`.
    func summary() -> String {
        let object: [String: Any] = failure.map { ["error": $0] } ?? ["parts": parts]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private func finishPart() {
        var part: [String: Any] = ["length": length, "sha256": Hex.string(hasher.finalize()),
                                   "headers": headers.map { "\($0.0): \($0.1)" }]
        for (name, value) in headers {
            switch name.lowercased() {
            case "content-disposition":
                if let field = Self.parameter("name", in: value) { part["name"] = field }
                if let file = Self.parameter("filename", in: value) { part["filename"] = file }
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
        hasher = SHA256()
        length = 0
        gunzip = nil
    }

    /// The value of `key` in a `Content-Disposition` value, quoted strings read whole (escapes left as sent).
    private static func parameter(_ key: String, in value: String) -> String? {
        var rest = Substring(value)
        while let semicolon = rest.firstIndex(of: ";") {
            rest = rest[rest.index(after: semicolon)...].drop { $0 == " " }
            guard let equals = rest.firstIndex(of: "=") else { return nil }
            let name = rest[..<equals].lowercased()
            rest = rest[rest.index(after: equals)...]
            let found: Substring
            if rest.first == "\"" {
                let body = rest.dropFirst()
                let end = body.firstIndex(of: "\"") ?? body.endIndex
                found = body[..<end]
                rest = end < body.endIndex ? body[body.index(after: end)...] : body[end...]
            } else {
                found = rest.prefix { $0 != ";" }
                rest = rest[found.endIndex...]
            }
            if name == key { return String(found) }
        }
        return nil
    }
}

/// The length and SHA-256 of what a gzip stream decodes to, inflated chunk by chunk; length -1 when it is corrupt.
final class GunzipDigest {
    private let decompressor = try? ZlibDecompressor(algorithm: .gzip)
    private var hasher = SHA256()
    private var length = 0
    private var corrupt = false
    private var output = ByteBufferAllocator().buffer(capacity: 256 * 1024)

    func update(_ chunk: ByteBuffer) {
        guard !corrupt, let decompressor else { corrupt = true; return }
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
                corrupt = true
                return
            }
            length += output.readableBytes
            output.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            if input.readableBytes > 0, output.readableBytes > 0 { more = true }
        }
    }

    func finish() -> (Int, String) { corrupt ? (-1, "") : (length, Hex.string(hasher.finalize())) }
}
