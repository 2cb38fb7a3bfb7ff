public import NIOCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a request sends: nothing, bytes, JSON, a form, a file streamed from disk, or an async stream.
///
/// ```swift
/// let bodies: [RequestBody] = [
///     .json(NewUser(name: "ada")),        // Encodable
///     .json(["name": "ada", "age": 36]),  // a dictionary ("RESTful" JSON in)
///     .form(["q": "swift"]),
///     .file(URL(filePath: "/tmp/big.iso")),
/// ]
/// ```
public struct RequestBody: Sendable {
    enum Storage: Sendable {
        case empty
        case bytes(Data)
        case encoded(@Sendable () throws -> Data)
        case file(URL)
        case stream(ByteStream, length: Int64?)
    }

    let storage: Storage
    /// The `Content-Type` sent unless the request sets one itself.
    public var contentType: String?

    /// No body.
    public static let empty = RequestBody(storage: .empty, contentType: nil)

    /// Raw bytes, sent as they are.
    public static func bytes(_ data: Data, contentType: String? = "application/octet-stream") -> RequestBody {
        RequestBody(storage: .bytes(data), contentType: contentType)
    }

    /// UTF-8 text.
    public static func text(_ text: String, contentType: String = "text/plain; charset=utf-8") -> RequestBody {
        RequestBody(storage: .bytes(Data(text.utf8)), contentType: contentType)
    }

    /// An `Encodable` value as JSON (keys sorted unless you pass an encoder); encoding errors surface as ``CourierError/Code/encoding`` before sending.
    public static func json<Value: Encodable & Sendable>(_ value: Value, encoder: JSONEncoder? = nil) -> RequestBody {
        let box = SendableEncoder(encoder ?? .sorted)
        return RequestBody(storage: .encoded { try box.encoder.encode(value) }, contentType: "application/json")
    }

    /// A JSON object or array written as a literal: `.json(["name": "ada", "tags": ["a"]])`.
    public static func json(_ value: ParameterValue) -> RequestBody {
        json(value, encoder: nil)
    }

    /// Parameters as `application/x-www-form-urlencoded`.
    public static func form(_ parameters: Parameters) -> RequestBody {
        RequestBody(
            storage: .bytes(Data(FormEncoding.encode(parameters).utf8)),
            contentType: "application/x-www-form-urlencoded"
        )
    }

    /// A file streamed from disk in chunks; its length is sent as `Content-Length`.
    public static func file(_ url: URL, contentType: String? = "application/octet-stream") -> RequestBody {
        RequestBody(storage: .file(url), contentType: contentType)
    }

    /// An async sequence of chunks, sent as it is iterated. Such a body is read once, so it is never retried or
    /// redirected with 307/308, unless `replayable` says each iteration of `chunks` starts again from the first
    /// byte (as an OpenAPI `HTTPBody` that allows multiple iterations does).
    public static func stream<Chunks: AsyncSequence & Sendable>(
        _ chunks: Chunks,
        length: Int64? = nil,
        contentType: String? = "application/octet-stream",
        replayable: Bool = false
    ) -> RequestBody where Chunks.Element == ByteBuffer {
        RequestBody(
            storage: .stream(ByteStream(chunks, replayable: replayable), length: length),
            contentType: contentType
        )
    }

    /// A `multipart/form-data` body, streamed (files are read from disk as it is sent).
    public static func multipart(_ form: MultipartFormData) throws -> RequestBody { try form.body() }

    /// Whether this body has any content.
    public var isEmpty: Bool { if case .empty = storage { true } else { false } }

    /// Turns the description into bytes, a file or a stream, ready for a transport.
    func prepare() throws -> PreparedBody {
        switch storage {
        case .empty: return .empty
        case .bytes(let data): return .bytes(data)
        case .encoded(let encode):
            do { return .bytes(try encode()) } catch let error as CourierError { throw error } catch {
                throw CourierError(code: .encoding, message: "could not encode the body: \(error)", underlying: error)
            }
        case .file(let url):
            guard let size = FileChunks.readableSize(of: url) else {
                throw CourierError(
                    code: .unreadableBody,
                    message: "cannot read body file \"\(CourierError.printable(url.path(percentEncoded: false)))\""
                )
            }
            return .file(url, length: size)
        case .stream(let stream, let length): return .stream(stream, length: length)
        }
    }
}

/// `JSONEncoder` is a class without a `Sendable` promise; this box is used only to call `encode`, which does
/// not mutate the encoder, and the encoder is not shared with code that configures it afterwards.
private struct SendableEncoder: @unchecked Sendable {
    let encoder: JSONEncoder
    init(_ encoder: JSONEncoder) { self.encoder = encoder }
}

/// A body in the form a ``Transport`` sends it.
public enum PreparedBody: Sendable {
    /// No body.
    case empty
    /// Bytes in memory.
    case bytes(Data)
    /// A file on disk, read in chunks while sending.
    case file(URL, length: Int64)
    /// A stream, single-pass unless it says it is replayable (``ByteStream/isReplayable``).
    case stream(ByteStream, length: Int64?)

    /// The length when it is known before sending.
    public var length: Int64? {
        switch self {
        case .empty: 0
        case .bytes(let data): Int64(data.count)
        case .file(_, let length): length
        case .stream(_, let length): length
        }
    }

    /// Whether the body can be sent again (for a retry or a 307/308 redirect).
    public var isReplayable: Bool { if case .stream(let stream, _) = self { stream.isReplayable } else { true } }

    /// The bytes, when the body is in memory.
    public var data: Data? {
        switch self {
        case .empty: Data()
        case .bytes(let data): data
        default: nil
        }
    }

    /// The most bytes one chunk of a body holds: files are read, bytes copied, uploads counted and the payload
    /// compressor fed this much at a time. Large enough that a 1 GiB upload takes few hops between the reading
    /// task and the event loop, small enough that the few chunks in flight stay a few MiB.
    static let chunkSize = 1 << 20

    /// The body as chunks of at most 1 MiB, made as they are read (a file is read from disk only then).
    public func chunks() -> ByteStream {
        switch self {
        case .empty: .empty
        case .bytes(let data): ByteStream(DataChunks(data: data))
        case .file(let url, _): ByteStream(FileChunks(url: url))
        case .stream(let stream, _): stream
        }
    }
}
