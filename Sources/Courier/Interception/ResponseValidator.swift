import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a validator decided about a response.
public enum ValidationResult: Sendable {
    /// The response is fine; the next validator runs.
    case accept
    /// The response fails with this error.
    case reject(any Error)
    /// Drop the response: the request ends with ``CourierError/Code/ignored`` and no value.
    case ignore
}

/// Looks at a complete response and accepts, rejects or ignores it.
public protocol ResponseValidator: Sendable {
    /// Decides about `response`, the answer to `request`.
    func validate(_ response: ResponseBody, for request: PreparedRequest) -> ValidationResult
}

/// Accepts only the given status codes.
public struct StatusCodeValidator: ResponseValidator {
    /// The accepted codes.
    public var acceptable: Set<Int>
    /// The redactor applied to the body preview of the error.
    public var redactor: Redactor

    /// Accepts the codes in `range`.
    public init<Codes: Sequence>(_ codes: Codes, redactor: Redactor = .standard) where Codes.Element == Int {
        self.acceptable = Set(codes)
        self.redactor = redactor
    }

    /// Accepts 200–299.
    public static let successful = StatusCodeValidator(200..<300)

    /// Decides about the response.
    public func validate(_ response: ResponseBody, for request: PreparedRequest) -> ValidationResult {
        if acceptable.contains(response.status.code) { return .accept }
        let preview = BodyPreview.text(response.data, limit: 512).map(redactor.redact(body:))
        return .reject(
            CourierError.httpStatus(response.status, bodyPreview: preview, url: redactor.redact(url: request.url))
        )
    }
}

/// Accepts only responses whose `Content-Type` matches one of the given types (`application/json`, `text/*`).
public struct ContentTypeValidator: ResponseValidator {
    /// The accepted media types; `type/*` matches a whole family.
    public var acceptable: [String]

    /// Creates a validator.
    public init(_ acceptable: [String]) { self.acceptable = acceptable.map { $0.lowercased() } }

    /// Decides about the response.
    public func validate(_ response: ResponseBody, for request: PreparedRequest) -> ValidationResult {
        if response.data.isEmpty && response.headers[.contentType] == nil { return .accept }
        let mediaType = MediaType.essence(of: response.headers[.contentType] ?? "")
        let matches = acceptable.contains { pattern in
            pattern.hasSuffix("/*") ? mediaType.hasPrefix(String(pattern.dropLast())) : mediaType == pattern
        }
        if matches { return .accept }
        return .reject(
            CourierError.validation(
                "unacceptable Content-Type \"\(CourierError.printable(mediaType))\", expected \(acceptable.joined(separator: " or "))"
            )
        )
    }
}

/// Lets the caller decide from the body: RBEFireworks' validateBlock, for APIs that answer 200 with
/// `{"code": 1001, "msg": "…"}`.
///
/// ```swift
/// let orders = Request<Data>.get("/orders").validate(BusinessCodeValidator { json in
///     guard case .object(let fields) = json, fields["code"] == .int(0) else { return .reject(MyAPIError(json)) }
///     return .accept
/// })
/// ```
public struct BusinessCodeValidator: ResponseValidator {
    private let decide: @Sendable (ParameterValue) -> ValidationResult

    /// Runs `decide` on the body parsed as JSON; a body that is not JSON is rejected as a validation error.
    public init(_ decide: @escaping @Sendable (ParameterValue) -> ValidationResult) { self.decide = decide }

    /// Decides about the response.
    public func validate(_ response: ResponseBody, for request: PreparedRequest) -> ValidationResult {
        switch DecodingFailure.json(response) {
        case .success(let json): return decide(json)
        case .failure(let error): return .reject(error)
        }
    }
}

/// A validator from a closure.
public struct ClosureValidator: ResponseValidator {
    private let body: @Sendable (ResponseBody, PreparedRequest) -> ValidationResult
    /// Creates a validator that runs `body`.
    public init(_ body: @escaping @Sendable (ResponseBody, PreparedRequest) -> ValidationResult) { self.body = body }
    /// Decides about the response.
    public func validate(_ response: ResponseBody, for request: PreparedRequest) -> ValidationResult {
        body(response, request)
    }
}

extension ParameterValue {
    /// The value at `key` when this is an object.
    public subscript(key: String) -> ParameterValue? {
        if case .object(let object) = self { object[key] } else { nil }
    }

    /// The integer, when this is one (or a whole double).
    public var intValue: Int? {
        switch self {
        case .int(let value): value
        case .double(let value) where value.rounded() == value: Int(exactly: value)
        default: nil
        }
    }

    /// The string, when this is one.
    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
}

/// The start of a body as text, for error messages and logs.
enum BodyPreview {
    static func text(_ data: Data, limit: Int) -> String? {
        guard !data.isEmpty else { return nil }
        let prefix = data.prefix(limit)
        guard let text = String(data: prefix, encoding: .utf8) ?? String(data: prefix.dropLast(3), encoding: .utf8)
        else {
            return "<\(data.count) bytes of binary data>"
        }
        // A server's bytes: escaped before they reach a terminal or a log line (see ``TerminalText``).
        let safe = TerminalText.isSafe(text) ? text : TerminalText.escaped(text)
        return data.count > limit ? safe + "…" : safe
    }
}
