public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// The answer to a ``Request``: the decoded value with the status, headers, body bytes and timing.
public struct Response<Value: Sendable>: Sendable {
    /// Everything but the value, in one object of one concrete type, so changing the value's type (the session's
    /// typed shell does it for every response) moves one reference instead of each field through generic code.
    let storage: ResponseStorage
    /// The decoded value.
    public let value: Value

    /// The request as it was finally sent (after adapters and redirects).
    public var request: PreparedRequest { storage.request }
    /// The status.
    public var status: HTTPResponse.Status { storage.status }
    /// The headers.
    public var headers: HTTPFields { storage.fields.fields }
    /// The body bytes, decompressed.
    public var body: Data { storage.body }
    /// Where the answer came from: the network or the cache, how old, whether revalidated.
    public var cacheInfo: CacheInfo { storage.cacheInfo }
    /// When the request started, when its first byte arrived and when it ended.
    public var timing: Timing { storage.timing }

    /// Creates a response; sessions and stub transports build these.
    public init(
        value: Value,
        request: PreparedRequest,
        status: HTTPResponse.Status,
        headers: HTTPFields,
        body: Data,
        cacheInfo: CacheInfo = .network,
        timing: Timing
    ) {
        self.init(
            value: value,
            storage: ResponseStorage(
                request: request,
                status: status,
                fields: ResponseFields(headers),
                body: body,
                cacheInfo: cacheInfo,
                timing: timing
            )
        )
    }

    init(value: Value, storage: ResponseStorage) {
        self.storage = storage
        self.value = value
    }

    /// Whether the answer came from the cache rather than the network (also after a 304 revalidation).
    public var isFromCache: Bool { cacheInfo.isFromCache }

    /// The final URL.
    public var url: URL { request.url }

    /// The body as UTF-8 text, or `nil` when it is not valid UTF-8.
    public var string: String? { String(data: body, encoding: .utf8) }

    /// Decodes the body as JSON into `T`.
    public func decode<T: Decodable>(_ type: T.Type = T.self, using decoder: JSONDecoder = JSONDecoder()) throws -> T {
        do { return try decoder.decode(T.self, from: body) } catch {
            throw DecodingFailure.error(decoding: T.self, error)
        }
    }

    /// The same response with its value transformed. Consuming, so the other fields move into the new response
    /// instead of being copied (calling it on a value still in use copies that value first, as any call would).
    public consuming func map<T: Sendable>(_ transform: (Value) throws -> T) rethrows -> Response<T> {
        Response<T>(value: try transform(value), storage: storage)
    }
}

/// What a ``Response`` carries apart from its value; each field is documented on the ``Response`` property that
/// reads it. A class, so a response is copied (into the pool's result, through the typed shell, to each caller of a
/// shared call) by retaining one reference rather than each field's storage; it never changes once made.
final class ResponseStorage: Sendable {
    let request: PreparedRequest
    let status: HTTPResponse.Status
    let fields: ResponseFields
    let body: Data
    let cacheInfo: CacheInfo
    let timing: Timing

    init(
        request: PreparedRequest,
        status: HTTPResponse.Status,
        fields: ResponseFields,
        body: Data,
        cacheInfo: CacheInfo,
        timing: Timing
    ) {
        self.request = request
        self.status = status
        self.fields = fields
        self.body = body
        self.cacheInfo = cacheInfo
        self.timing = timing
    }
}
