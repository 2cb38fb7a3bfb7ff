/// The two structured-field items (RFC 9651) the resumable upload protocol's fields hold, read by the client and by
/// the test server alike: a boolean (`Upload-Complete`, `Upload-Incomplete`) and a non-negative integer
/// (`Upload-Offset`, `Upload-Length`, `Upload-Limit`'s members).
package enum StructuredFieldValue {
    /// `?1` or `?0` (spaces and tabs around allowed); `nil` for anything else or no field.
    package static func boolean(_ text: String?) -> Bool? {
        switch text?.trimmingOWS() {
        case "?1": true
        case "?0": false
        default: nil
        }
    }

    /// Up to 15 ASCII digits, the most a structured-field integer has (spaces and tabs around allowed); `nil` for a
    /// sign, any other character, more digits or no field.
    package static func integer(_ text: String?) -> Int64? {
        guard let text = text?.trimmingOWS(), !text.isEmpty, text.utf8.count <= 15,
            text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        return Int64(text)
    }
}
