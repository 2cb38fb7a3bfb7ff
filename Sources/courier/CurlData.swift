import Courier
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// curl's `-d` family turned into what it sends: one value streams (a file from disk, standard input), several are
/// read and joined with `&` in the order typed, as curl joins them.
enum CurlData {
    /// Which option gave a value, and so how `@` and the bytes are read.
    enum Kind {
        /// `-d`/`--data`: `@FILE` is read with its carriage returns and newlines removed.
        case text
        /// `--data-binary`: `@FILE` byte for byte.
        case binary
        /// `--data-raw`: `@` is an ordinary character.
        case raw
        /// `--data-urlencode`: percent-encoded, with curl's `name=` and `@FILE` forms.
        case urlencode
    }

    /// One value of the family.
    struct Part {
        var kind: Kind
        var text: String
    }

    /// The content type curl sends with `-d` data.
    static let contentType = "application/x-www-form-urlencoded"

    /// The body `parts` make: a single file or `@-` streams (line breaks removed on the way for `-d`), anything
    /// else is joined whole.
    static func body(_ parts: [Part]) throws -> RequestBody {
        if parts.count == 1, let part = parts.first, part.text.hasPrefix("@"), [.text, .binary].contains(part.kind) {
            let path = String(part.text.dropFirst())
            guard part.kind == .text else { return try CommandLineInput.streamed(path, contentType: contentType) }
            if path != "-" { try CommandLineInput.checkReadable(path) }
            let url = URL(filePath: path == "-" ? "/dev/stdin" : path)
            let chunks = FileChunks(url: url).map(withoutLineBreaks)
            return .stream(chunks, length: path == "-" ? nil : try keptLength(of: url), contentType: contentType)
        }
        return .bytes(try joined(parts), contentType: contentType)
    }

    /// The values of `parts` joined with `&`, each read as its option reads it (files whole).
    static func joined(_ parts: [Part]) throws -> Data {
        var joined = Data()
        for (index, part) in parts.enumerated() {
            if index > 0 { joined.append(UInt8(ascii: "&")) }
            joined.append(try bytes(of: part))
        }
        return joined
    }

    private static func bytes(of part: Part) throws -> Data {
        switch part.kind {
        case .raw: return Data(part.text.utf8)
        case .text, .binary:
            guard part.text.hasPrefix("@") else { return Data(part.text.utf8) }
            let data = try CommandLineInput.readData(String(part.text.dropFirst()))
            return part.kind == .text ? data.filter { !isLineBreak($0) } : data
        case .urlencode: return Data(try urlencoded(part.text).utf8)
        }
    }

    /// `--data-urlencode`'s forms: `content` and `=content` encode the content; `name=content` keeps the name and
    /// encodes the content; `@FILE` and `name@FILE` encode what the file holds.
    static func urlencoded(_ text: String) throws -> String {
        if let equals = text.firstIndex(of: "=") {
            let name = text[..<equals]
            let content = percentEncoded(Data(text[text.index(after: equals)...].utf8))
            return name.isEmpty ? content : name + "=" + content
        }
        if let at = text.firstIndex(of: "@") {
            let name = text[..<at]
            let content = percentEncoded(try CommandLineInput.readData(String(text[text.index(after: at)...])))
            return name.isEmpty ? content : name + "=" + content
        }
        return percentEncoded(Data(text.utf8))
    }

    /// `bytes` with a space as `+` and every other byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`) as `%XX`,
    /// as curl's `--data-urlencode` encodes a form value.
    static func percentEncoded(_ bytes: Data) -> String {
        PercentEncoding.encode(bytes: bytes, keeping: PercentEncoding.isUnreserved, spaceAsPlus: true)
    }

    /// How many bytes of the regular file at `url` are neither carriage returns nor newlines, read in chunks, so
    /// `-d @FILE` sends a `Content-Length` as curl does while memory stays flat; `nil` for a file with no size to
    /// trust (a FIFO, a `/proc` file), which goes chunked.
    private static func keptLength(of url: URL) throws -> Int64? {
        guard let size = FileChunks.readableSize(of: url), size > 0 else { return nil }
        let path = url.path(percentEncoded: false)
        var kept: Int64 = 0
        do {
            try FileReading.chunks(ofFileAt: path, chunkSize: 1 << 16) { chunk in
                kept += Int64(chunk.count - chunk.reduce(0) { $0 + (isLineBreak($1) ? 1 : 0) })
            }
        } catch {
            throw InputFailure(path: path, reason: "\(error)")
        }
        return kept
    }

    /// Whether `byte` is a carriage return or a newline, which `-d @FILE` leaves out.
    private static func isLineBreak(_ byte: UInt8) -> Bool { byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") }

    /// A chunk without its carriage returns and newlines (`-d @FILE`).
    @Sendable private static func withoutLineBreaks(_ chunk: ByteBuffer) -> ByteBuffer {
        var kept = ByteBuffer()
        kept.reserveCapacity(chunk.readableBytes)
        chunk.withUnsafeReadableBytes { bytes in
            for byte in bytes where !isLineBreak(byte) { kept.writeInteger(byte) }
        }
        return kept
    }
}
