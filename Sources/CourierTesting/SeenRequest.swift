import Courier
import NIOCore
import NIOHTTP1

/// A request as ``TestServer`` saw it arrive: its head and how long its body was.
public struct SeenRequest: Sendable {
    /// How many requests a server keeps.
    static let kept = 1000

    /// The method, such as `GET`.
    public var method: String
    /// The path, without the query.
    public var path: String
    /// The request target as sent, with the query.
    public var uri: String
    /// The HTTP version, `HTTP/1.1` or `HTTP/2`.
    public var version: String
    /// The header fields in the order they came, names as sent.
    public var headers: [(name: String, value: String)]
    /// The body's length in bytes.
    public var bodyLength: Int
    /// The body's first bytes (up to ``keptBodyBytes``), as they arrived.
    public var body: [UInt8]

    /// How many of a body's bytes a seen request keeps.
    public static let keptBodyBytes = 64 << 10

    init(_ head: HTTPRequestHead, path: String, bodyLength: Int, body: ByteBuffer = ByteBuffer()) {
        method = head.method.rawValue
        self.path = path
        uri = head.uri
        version = head.version.text
        headers = head.headers.map { ($0.name, $0.value) }
        self.bodyLength = bodyLength
        self.body = body.getBytes(at: body.readerIndex, length: min(body.readableBytes, Self.keptBodyBytes)) ?? []
    }

    /// The kept body as UTF-8 text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The first value of the header `name` (any case).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}
