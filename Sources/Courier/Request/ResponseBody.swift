public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A received body with the head it came with: what a request's decoding and validators look at.
public struct ResponseBody: Sendable {
    /// The status.
    public var status: HTTPResponse.Status
    /// The headers.
    public var headers: HTTPFields {
        get { fields.fields }
        set { fields = ResponseFields(newValue) }
    }
    /// The headers as kept: from the network, converted to `HTTPFields` only when read.
    private(set) var fields: ResponseFields
    /// The body bytes, already decompressed.
    public var data: Data
    /// The request this answered as it was finally sent (after redirects), and when its head arrived: set by the
    /// session on every answer it reads from the network (so a caller sharing another's call gets that call's),
    /// `nil` on one made elsewhere (an interceptor's, the cache's, a test's).
    var sent: PreparedRequest?
    var firstByte: Tick?
    /// The connection that carried it, when the transport says (see ``ConnectionFacts``).
    var connection: ConnectionUse?

    /// Creates a body value; transports and tests use it, sessions build it themselves.
    public init(status: HTTPResponse.Status, headers: HTTPFields, data: Data) {
        self.init(status: status, fields: ResponseFields(headers), data: data)
    }

    init(status: HTTPResponse.Status, fields: ResponseFields, data: Data) {
        self.status = status
        self.fields = fields
        self.data = data
    }

    /// The body as UTF-8 text, or `nil` when it is not valid UTF-8.
    public var string: String? { String(data: data, encoding: .utf8) }

    /// The default decoding for a `Decodable` type: raw bytes for `Data`, text for `String`, nothing for ``Empty``,
    /// JSON for the rest.
    static func decoder<T: Decodable & Sendable>(
        for type: T.Type,
        using decoder: JSONDecoder
    ) -> @Sendable (ResponseBody) throws -> T {
        if T.self == Data.self { return { body in body.data as! T } }  // the check above makes the cast certain
        if T.self == String.self {
            return { body in
                guard let text = body.string else {
                    throw CourierError(code: .decoding, message: "the body is not valid UTF-8 text")
                }
                return text as! T  // certain, as above
            }
        }
        if T.self == Empty.self { return { _ in Empty() as! T } }  // certain, as above
        let box = JSONDecoderBox(decoder)
        return { body in
            do { return try box.decoder.decode(T.self, from: body.data) } catch {
                throw DecodingFailure.error(decoding: T.self, error)
            }
        }
    }
}

/// `JSONDecoder` is not declared `Sendable` everywhere Foundation runs; `decode` does not mutate it and the box
/// is made from a decoder the caller handed over, so sharing it between tasks is safe.
private struct JSONDecoderBox: @unchecked Sendable {
    let decoder: JSONDecoder
    init(_ decoder: JSONDecoder) { self.decoder = decoder }
}

/// Turns `DecodingError` into one readable line with the key path.
enum DecodingFailure {
    /// The ``CourierError/Code/decoding`` error for a failure to decode `type`.
    static func error<T>(decoding type: T.Type, _ error: any Error) -> CourierError {
        CourierError(code: .decoding, message: "could not decode \(T.self): \(describe(error))", underlying: error)
    }

    /// The body parsed as JSON, or the validation error every JSON-reading validator reports.
    static func json(_ body: ResponseBody) -> Result<ParameterValue, CourierError> {
        guard let value = try? JSONDecoder().decode(ParameterValue.self, from: body.data) else {
            return .failure(CourierError.validation("the body is not JSON"))
        }
        return .success(value)
    }

    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let text = KeyPathText.render(context.codingPath)
            return text.isEmpty ? "the top level" : text
        }
        switch error {
        case .typeMismatch(let type, let context): return "expected \(type) at \(path(context))"
        case .valueNotFound(let type, let context): return "missing \(type) value at \(path(context))"
        case .keyNotFound(let key, let context): return "missing key \"\(key.stringValue)\" at \(path(context))"
        case .dataCorrupted(let context): return "\(context.debugDescription) at \(path(context))"
        @unknown default: return "\(error)"
        }
    }
}

/// Renders coding paths as `data.items[2].id`.
enum KeyPathText {
    static func render(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }
}
