public import NIOCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A `multipart/form-data` body (RFC 7578) built from text fields, bytes and files, streamed from disk in
/// 1 MiB chunks so a large file never sits in memory; the `Content-Length` is known before the first byte.
///
/// A field or file name with a control character in it (CR, LF, NUL…) is refused with
/// ``CourierError/Code/invalidHeader``, as a header value would be; a quote is escaped as browsers do (`%22`). So
/// no name can break the framing. Extra part headers are validated like request headers.
///
/// Browsers escape CR and LF in names (`%0D`, `%0A`) instead of refusing them; Courier refuses, so a name that
/// arrives changed never goes out unnoticed.
///
/// ```swift
/// var form = MultipartFormData()
/// try form.append(field: "title", value: "Holiday")
/// try form.append(file: URL(filePath: "/photos/beach.jpg"), name: "photo")   // image/jpeg, from the extension
/// let response = try await session.send(Request<Data>.post("/upload", body: try form.body()))
/// ```
public struct MultipartFormData: Sendable {
    /// What one part carries.
    enum Content: Sendable {
        case data(Data)
        case file(URL)
        /// A file compressed with gzip at this level while it is sent.
        case gzippedFile(URL, level: Int)
        /// Bytes from a sequence, read once while the body is sent; their count when the caller knows it.
        case stream(ByteStream, length: Int64?)

        /// Whether the part can be read again from its first byte.
        var isReplayable: Bool { if case .stream(let stream, _) = self { stream.isReplayable } else { true } }
    }

    /// One part: its header block (already rendered) and its content.
    package struct Part: Sendable {
        package let header: Data
        let content: Content
    }

    /// The boundary between parts.
    public let boundary: String
    package private(set) var parts: [Part] = []

    /// An empty form with a random boundary (or the given one, for tests that need stable bytes).
    public init(boundary: String? = nil) {
        self.boundary =
            boundary ?? "courier-" + (0..<4).map { _ in String(UInt64.random(in: 0...UInt64.max), radix: 36) }.joined()
    }

    /// `multipart/form-data; boundary=…`, the request's `Content-Type`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a text field; throws ``CourierError/Code/invalidHeader`` when the name holds a control character.
    public mutating func append(field name: String, value: String) throws {
        parts.append(
            Part(
                header: try header(name: name, fileName: nil, contentType: nil, extra: []),
                content: .data(Data(value.utf8))
            )
        )
    }

    /// Adds bytes as a part, as a file upload when `fileName` is given. Throws ``CourierError/Code/invalidHeader``
    /// when a name, the content type or a header holds a control character.
    public mutating func append(
        data: Data,
        name: String,
        fileName: String? = nil,
        contentType: String? = nil,
        headers: [(name: String, value: String)] = []
    ) throws {
        try validate(headers, contentType: contentType)
        let type = contentType ?? (fileName.map(MIMEType.forFileName) ?? nil)
        parts.append(
            Part(
                header: try header(name: name, fileName: fileName, contentType: type, extra: headers),
                content: .data(data)
            )
        )
    }

    /// Adds a file, read from disk while the body is sent. The file name defaults to the file's own, the type
    /// to the one its extension suggests. Throws ``CourierError/Code/unreadableBody`` when it is not a readable
    /// regular file, and ``CourierError/Code/invalidHeader`` when a name (the file's own included: Linux allows a
    /// newline in one), the content type or a header holds a control character; pass `fileName` to send another.
    ///
    /// With `gzipLevel` (1…9) the file is pre-compressed part by part as it is read: the part is named
    /// `<file name>.gz` with type `application/gzip`, and the form's length is no longer known up front
    /// (``contentLength()`` is `nil`, the body goes chunked).
    public mutating func append(
        file url: URL,
        name: String,
        fileName: String? = nil,
        contentType: String? = nil,
        headers: [(name: String, value: String)] = [],
        gzipLevel: Int? = nil
    ) throws {
        try validate(headers, contentType: contentType)
        _ = try Self.size(of: url)
        let shownName = fileName ?? url.lastPathComponent
        if let gzipLevel {
            parts.append(
                Part(
                    header: try header(
                        name: name,
                        fileName: shownName + ".gz",
                        contentType: "application/gzip",
                        extra: headers
                    ),
                    content: .gzippedFile(url, level: gzipLevel)
                )
            )
            return
        }
        let type = contentType ?? MIMEType.forFileName(shownName)
        parts.append(
            Part(
                header: try header(name: name, fileName: shownName, contentType: type, extra: headers),
                content: .file(url)
            )
        )
    }

    /// Adds a part whose bytes come from an `AsyncSequence` of `ByteBuffer`s (RBEFireworks' input-stream part),
    /// read once while the body is sent, so the form can be sent only once. With `length` the form keeps a
    /// `Content-Length` (a sequence that yields another count fails the upload with
    /// ``CourierError/Code/encoding``); without it the body goes chunked.
    ///
    /// ```swift
    /// import NIOCore
    ///
    /// var form = MultipartFormData()
    /// try form.append(stream: ByteStream(chunks: [ByteBuffer(string: "a,b\n")]), name: "rows", fileName: "rows.csv", length: 4)
    /// ```
    public mutating func append<Source: AsyncSequence & Sendable>(
        stream source: Source,
        name: String,
        fileName: String? = nil,
        contentType: String? = nil,
        length: Int64? = nil,
        headers: [(name: String, value: String)] = []
    ) throws
    where Source.Element == ByteBuffer {
        try validate(headers, contentType: contentType)
        guard length.map({ $0 >= 0 }) ?? true else {
            throw CourierError(code: .invalidParameter, message: "a stream part's length cannot be negative")
        }
        let type = contentType ?? (fileName.map(MIMEType.forFileName) ?? "application/octet-stream")
        let stream = (source as? ByteStream) ?? ByteStream(source)
        parts.append(
            Part(
                header: try header(name: name, fileName: fileName, contentType: type, extra: headers),
                content: .stream(stream, length: length)
            )
        )
    }

    /// The exact number of bytes the body will have, from the parts and the files' sizes now; `nil` when a
    /// part is compressed while it is sent, or is a stream of unknown length.
    public func contentLength() throws -> Int64? {
        var total: Int64? = Int64(closing.count)
        for part in parts {
            let content: Int64?
            switch part.content {
            case .data(let data): content = Int64(data.count)
            case .file(let url): content = try Self.size(of: url)
            case .gzippedFile(let url, _):
                _ = try Self.size(of: url)  // checked to be readable; its compressed size is known only once sent
                content = nil
            case .stream(_, let length): content = length
            }
            // the header block, the content, and CRLF after it
            total = total.flatMap { total in content.map { total + Int64(part.header.count + 2) + $0 } }
        }
        return total
    }

    /// The request body: streamed, with its length and content type. It can be sent again (a retry, a 307 or 308
    /// redirect) unless a part is a one-pass stream.
    public func body() throws -> RequestBody {
        .stream(
            MultipartChunks(parts: parts, closing: closing),
            length: try contentLength(),
            contentType: contentType,
            replayable: parts.allSatisfy(\.content.isReplayable)
        )
    }

    /// The whole form as bytes when every part is held in memory (text fields and data), `nil` when a part is a
    /// file or a stream.
    package var bytesInMemory: Data? {
        var bytes = Data()
        for part in parts {
            guard case .data(let data) = part.content else { return nil }
            bytes.append(part.header)
            bytes.append(data)
            bytes.append(contentsOf: "\r\n".utf8)
        }
        return bytes + closing
    }

    private var closing: Data { Data("--\(boundary)--\r\n".utf8) }

    private func header(
        name: String,
        fileName: String?,
        contentType: String?,
        extra: [(name: String, value: String)]
    ) throws -> Data {
        try Self.checkName(name, role: "field name")
        if let fileName { try Self.checkName(fileName, role: "file name") }
        var text = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escape(name))\""
        if let fileName { text += "; filename=\"\(Self.escape(fileName))\"" }
        text += "\r\n"
        if let contentType { text += "Content-Type: \(contentType)\r\n" }
        for (headerName, value) in extra { text += "\(headerName): \(value)\r\n" }
        return Data((text + "\r\n").utf8)
    }

    /// `"` → `%22`, the HTML standard's form encoding of a quote (the only character of a checked name that
    /// could end its quoted string).
    static func escape(_ name: String) -> String {
        var escaped = ""
        for scalar in name.unicodeScalars {  // scalars: a quote with a combining mark after it is still a quote
            if scalar == "\"" { escaped += "%22" } else { escaped.unicodeScalars.append(scalar) }
        }
        return escaped
    }

    /// Refuses a name the way a header value with a control character is refused: CR and LF would start a line.
    private static func checkName(_ name: String, role: String) throws {
        if let what = HeaderValidation.controlCharacter(in: name) {
            throw CourierError.invalidHeader(name: "Content-Disposition", reason: "has a \(role) containing \(what)")
        }
    }

    /// Refuses a part header that is not a valid field, or whose line would start with the form's boundary
    /// delimiter (a name such as `--BOUNDARY`): a parser that looks for the delimiter after a line break would end
    /// the part there.
    private func validate(_ headers: [(name: String, value: String)], contentType: String?) throws {
        for (name, value) in headers {
            _ = try HeaderValidation.field(name: name, value: value)
            if name.utf8.starts(with: "--\(boundary)".utf8) {
                throw CourierError.invalidHeader(name: name, reason: "would start a line with the form's boundary")
            }
        }
        if let contentType { _ = try HeaderValidation.field(name: "Content-Type", value: contentType) }
    }

    static func size(of url: URL) throws -> Int64 {
        guard let size = FileChunks.readableSize(of: url) else {
            throw CourierError(
                code: .unreadableBody,
                message:
                    "cannot read the file \"\(CourierError.printable(url.path(percentEncoded: false)))\" for the form"
            )
        }
        return size
    }
}

/// The bytes of a form, part by part: each header block, then the content (files in 1 MiB chunks), then CRLF;
/// finally the closing boundary.
struct MultipartChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let parts: [MultipartFormData.Part]
    let closing: Data

    func makeAsyncIterator() -> Iterator { Iterator(parts: parts, closing: closing) }

    struct Iterator: AsyncIteratorProtocol {
        private var pending: [ByteBuffer] = []
        private var parts: ArraySlice<MultipartFormData.Part>
        private var file: ByteStream.AsyncIterator?
        private var closing: Data?

        init(parts: [MultipartFormData.Part], closing: Data) {
            self.parts = parts[...]
            self.closing = closing
        }

        mutating func next() async throws -> ByteBuffer? {
            while true {
                if !pending.isEmpty { return pending.removeFirst() }
                if var current = file {
                    let chunk = try await current.next()
                    file = current
                    if let chunk { return chunk }
                    file = nil
                    return ByteBuffer(string: "\r\n")
                }
                if let part = parts.popFirst() {
                    pending.append(ByteBuffer(bytes: part.header))
                    switch part.content {
                    case .data(let data):
                        var content = ByteBuffer(bytes: data)
                        content.writeString("\r\n")
                        pending.append(content)
                    case .file(let url):
                        file = ByteStream(FileChunks(url: url)).makeAsyncIterator()
                    case .gzippedFile(let url, let level):
                        file = ByteStream(
                            CompressedChunks(
                                base: ByteStream(FileChunks(url: url)),
                                encoding: .gzip,
                                setting: ZlibSetting(level: level)
                            )
                        ).makeAsyncIterator()
                    case .stream(let stream, _):
                        file = stream.makeAsyncIterator()
                    }
                    continue
                }
                guard let last = closing else { return nil }
                closing = nil
                return ByteBuffer(bytes: last)
            }
        }
    }
}
