import Courier
package import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A streaming `multipart/form-data` reader (RFC 7578, RFC 2046 §5.1) for the test server: headers as they are
/// read, content in pieces as it arrives, and the end of each part. It looks for the delimiter with `memchr`, so
/// a 1 GiB part passes at memory speed, and holds no more than a header block or a delimiter's length of it.
package final class MultipartStreamParser {
    /// The form is not multipart as RFC 2046 writes it.
    package struct Malformed: Error {}

    private enum State {
        /// Before the first delimiter, or in a part's content.
        case content
        /// Just after a delimiter: `--` (the end) or a line break (a part's headers) comes next.
        case afterDelimiter
        case headers
        case finished
    }

    /// Called with each header of a part, name and value as sent.
    package var onHeader: (String, String) -> Void = { _, _ in }
    /// Called with each piece of a part's content.
    package var onBody: (ByteBuffer) -> Void = { _ in }
    /// Called when a part's content has ended.
    package var onPartComplete: () -> Void = {}

    /// CR LF `--` boundary. The body is read as if it began with CR LF, so the first delimiter, which has none,
    /// is found like the others.
    private let delimiter: [UInt8]
    private var buffer = ByteBuffer(bytes: Array("\r\n".utf8))
    private var state = State.content
    private var inPart = false
    /// The longest header block read (RFC 7578 parts have a few short headers).
    private static let headerLimit = 16 * 1024

    package init(boundary: String) { delimiter = Array("\r\n--\(boundary)".utf8) }

    /// Reads the next bytes of the body; throws ``Malformed`` at the first thing that cannot be multipart.
    package func execute(_ chunk: ByteBuffer) throws {
        var chunk = chunk
        buffer.writeBuffer(&chunk)
        while try step() {}
        if buffer.readerIndex > 64 * 1024 { buffer.discardReadBytes() }
    }

    /// Reads what can be read now; `false` when it needs more bytes.
    private func step() throws -> Bool {
        switch state {
        case .finished:
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)  // the epilogue is ignored
            return false
        case .content:
            let (found, contentLength) = findDelimiter()
            if contentLength > 0, let content = buffer.readSlice(length: contentLength), inPart { onBody(content) }
            guard found else { return false }
            buffer.moveReaderIndex(forwardBy: delimiter.count)
            if inPart { onPartComplete() }
            state = .afterDelimiter
            return true
        case .afterDelimiter:
            guard let first = buffer.getInteger(at: buffer.readerIndex, as: UInt16.self) else { return false }
            if first == UInt16(ascii: "-", "-") {
                state = .finished
                inPart = false
                return true
            }
            guard first == UInt16(ascii: "\r", "\n") else { throw Malformed() }
            buffer.moveReaderIndex(forwardBy: 2)
            state = .headers
            return true
        case .headers:
            return try readHeaders()
        }
    }

    /// Whether the buffer holds a whole delimiter, and how many bytes before it (or before a tail that could begin
    /// one) are content.
    private func findDelimiter() -> (found: Bool, length: Int) {
        buffer.withUnsafeReadableBytes { bytes in
            guard let base = bytes.baseAddress else { return (false, 0) }
            var start = 0
            while start < bytes.count, let cr = memchr(base + start, 13, bytes.count - start) {
                let position = base.distance(to: UnsafeRawPointer(cr))
                let available = min(delimiter.count, bytes.count - position)
                if memcmp(cr, delimiter, available) == 0 { return (available == delimiter.count, position) }
                start = position + 1
            }
            return (false, bytes.count)
        }
    }

    /// Reads a part's header block up to its empty line.
    private func readHeaders() throws -> Bool {
        let view = buffer.readableBytesView
        if view.starts(with: [13, 10]) {  // no headers at all
            buffer.moveReaderIndex(forwardBy: 2)
            startPart()
            return true
        }
        guard let end = view.firstRange(of: [13, 10, 13, 10]) else {
            if view.count > Self.headerLimit { throw Malformed() }
            return false
        }
        let block = String(decoding: view[view.startIndex..<end.lowerBound], as: UTF8.self)
        buffer.moveReaderIndex(forwardBy: end.upperBound - view.startIndex)
        for line in block.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { throw Malformed() }
            onHeader(String(line[..<colon]).trimmingOWS(), String(line[line.index(after: colon)...]).trimmingOWS())
        }
        startPart()
        return true
    }

    private func startPart() {
        inPart = true
        state = .content
    }
}

extension UInt16 {
    /// Two ASCII characters as a big-endian `UInt16`, the way `ByteBuffer.getInteger` reads them.
    fileprivate init(ascii first: Unicode.Scalar, _ second: Unicode.Scalar) {
        self = UInt16(UInt8(ascii: first)) << 8 | UInt16(UInt8(ascii: second))
    }
}
