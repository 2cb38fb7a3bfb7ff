#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// Request parameters: an unordered map of names to values; encoders sort by name so the output is stable.
public typealias Parameters = [String: ParameterValue]

/// One parameter value: the JSON data model, written with literals.
///
/// ```swift
/// let parameters: Parameters = ["page": 2, "tags": ["a", "b"], "filter": ["active": true]]
/// ```
public enum ParameterValue: Sendable, Hashable {
    /// Text.
    case string(String)
    /// A whole number.
    case int(Int)
    /// A number with a fraction.
    case double(Double)
    /// `true` or `false`.
    case bool(Bool)
    /// An ordered list (`a[]=1&a[]=2` in a form, an array in JSON).
    case array([ParameterValue])
    /// Named values (`a[b]=c` in a form, an object in JSON).
    case object([String: ParameterValue])
    /// No value (an empty string in a form, `null` in JSON).
    case null
}

extension ParameterValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    /// A ``string(_:)``.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An ``int(_:)``.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// A ``double(_:)``.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A ``bool(_:)``.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An ``array(_:)``.
    public init(arrayLiteral elements: ParameterValue...) { self = .array(elements) }
    /// An ``object(_:)``; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, ParameterValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// ``null``.
    public init(nilLiteral: ()) { self = .null }
}

extension ParameterValue: Codable {
    /// Encodes the value as the matching JSON value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([ParameterValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: ParameterValue].self))
        }
    }
}

extension ParameterValue {
    /// Whether `data` is one JSON value (an object, an array, or a bare string, number, `true`, `false`, `null`).
    package static func isJSON(_ data: Data) -> Bool {
        (try? JSONDecoder().decode(ParameterValue.self, from: data)) != nil
    }
}

extension ParameterValue: CustomStringConvertible {
    /// The value as it appears in a query string before percent-encoding.
    public var description: String {
        switch self {
        case .string(let value): value
        case .int(let value): String(value)
        case .double(let value): Self.text(of: value)
        case .bool(let value): value ? "true" : "false"
        case .null: ""
        case .array, .object: (try? String(decoding: JSONEncoder.sorted.encode(self), as: UTF8.self)) ?? ""
        }
    }
}

extension JSONEncoder {
    /// A JSON encoder with sorted keys, so equal values always encode to equal bytes.
    package static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}

extension ParameterValue {
    /// A number as a form writes it: `2` for a whole number, Swift's shortest exact digits otherwise (`0.1`).
    static func text(of value: Double) -> String {
        if value.rounded() == value, Swift.abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}
