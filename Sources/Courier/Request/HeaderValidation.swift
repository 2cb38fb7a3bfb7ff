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
        if let what = controlCharacter(in: value) {
            throw CourierError.invalidHeader(name: name, reason: "has a value containing \(what)")
        }
    }

    /// The first character a header value may not hold (a C0 control other than tab, or DEL), named for an error
    /// message ("CR", "LF", "NUL", "a control character"); `nil` when there is none.
    static func controlCharacter(in text: String) -> String? {
        guard let scalar = text.unicodeScalars.first(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F })
        else { return nil }
        return switch scalar {
        case "\r": "CR"
        case "\n": "LF"
        case "\0": "NUL"
        default: "a control character"
        }
    }
}
