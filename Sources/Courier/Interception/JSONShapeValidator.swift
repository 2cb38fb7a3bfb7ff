#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The expected shape of a JSON value, for ``JSONShapeValidator``.
public indirect enum JSONShape: Sendable, Hashable {
    /// A JSON string.
    case string
    /// A JSON number.
    case number
    /// `true` or `false`.
    case bool
    /// `null`.
    case null
    /// Any value, but the key must be present.
    case any
    /// An object with at least these keys, each of this shape.
    case object([String: JSONShape])
    /// An array whose every element has this shape.
    case array(of: JSONShape)
    /// This shape, or `null`, or a missing key.
    case optional(JSONShape)

    var name: String {
        switch self {
        case .string: "string"
        case .number: "number"
        case .bool: "bool"
        case .null: "null"
        case .any: "any value"
        case .object: "object"
        case .array: "array"
        case .optional(let inner): "optional \(inner.name)"
        }
    }
}

/// Checks that the body is JSON of a given shape (RBEFireworks' responseValidator); the error names the
/// first offending key path, such as `data.items[2].id`.
///
/// ```swift
/// JSONShapeValidator(["code": .number, "data": .object(["id": .number, "tags": .array(of: .string)])])
/// ```
public struct JSONShapeValidator: ResponseValidator {
    /// The shape required of the top-level value.
    public var shape: JSONShape

    /// Requires the body to be an object with at least these keys.
    public init(_ keys: [String: JSONShape]) { self.shape = .object(keys) }
    /// Requires the body to match `shape`.
    public init(shape: JSONShape) { self.shape = shape }

    /// Decides about the response.
    public func validate(_ response: ResponseBody, for request: PreparedRequest) -> ValidationResult {
        let value: ParameterValue
        switch DecodingFailure.json(response) {
        case .success(let json): value = json
        case .failure(let error): return .reject(error)
        }
        if let mismatch = Self.firstMismatch(value, shape, path: "") { return .reject(mismatch) }
        return .accept
    }

    /// The first place `value` differs from `shape`, depth first, keys in sorted order.
    static func firstMismatch(_ value: ParameterValue?, _ shape: JSONShape, path: String) -> CourierError? {
        let here = path.isEmpty ? "$" : path
        func fail(_ found: String) -> CourierError {
            CourierError.validation("expected \(shape.name), found \(found)", keyPath: here)
        }
        guard let value else {
            if case .optional = shape { return nil }
            if case .any = shape { return fail("a missing key") }
            return fail("a missing key")
        }
        switch (shape, value) {
        case (.any, _), (.string, .string), (.bool, .bool), (.null, .null), (.number, .int), (.number, .double):
            return nil
        case (.optional(let inner), _):
            if case .null = value { return nil }
            return firstMismatch(value, inner, path: path)
        case (.object(let keys), .object(let object)):
            for key in keys.keys.sorted() {
                if let mismatch = firstMismatch(
                    object[key],
                    keys[key] ?? .any,
                    path: path.isEmpty ? key : "\(path).\(key)"
                ) {
                    return mismatch
                }
            }
            return nil
        case (.array(let element), .array(let items)):
            for (index, item) in items.enumerated() {
                if let mismatch = firstMismatch(item, element, path: "\(path)[\(index)]") { return mismatch }
            }
            return nil
        default:
            return fail(Self.kind(of: value))
        }
    }

    private static func kind(of value: ParameterValue) -> String {
        switch value {
        case .string: "string"
        case .int, .double: "number"
        case .bool: "bool"
        case .null: "null"
        case .array: "array"
        case .object: "object"
        }
    }
}
