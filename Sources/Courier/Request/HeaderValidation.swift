public import HTTPTypes

/// The rule that keeps header injection off the wire: names must be RFC 9110 tokens, and values may not hold
/// CR, LF, NUL or other control characters (horizontal tab excepted).
public enum HeaderValidation {
    /// The parsed field, or a ``CourierError/Code/invalidHeader`` error naming the header.
    public static func field(name: String, value: String) throws -> HTTPField {
        guard let fieldName = HTTPField.Name(name) else {
            throw CourierError.invalidHeader(name: name, reason: "is not a valid header name")
        }
        try check(value: value, name: name)
        return HTTPField(name: fieldName, value: value)
    }

    /// Throws when `value` could split a header or the request.
    public static func check(value: String, name: String) throws {
        for scalar in value.unicodeScalars where (scalar.value < 0x20 && scalar != "\t") || scalar.value == 0x7F {
            let what = switch scalar { case "\r": "CR"; case "\n": "LF"; case "\0": "NUL"; default: "a control character" }
            throw CourierError.invalidHeader(name: name, reason: "has a value containing \(what)")
        }
    }

    /// Checks every field; HTTPTypes already refuses bad names, values are checked here.
    static func check(_ fields: HTTPFields) throws {
        for field in fields { try check(value: field.value, name: field.name.rawName) }
    }
}
