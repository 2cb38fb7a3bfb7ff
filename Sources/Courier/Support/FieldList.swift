/// The members of a comma-separated field value (RFC 9110 §5.6.1), split at the commas outside quoted strings and
/// returned as written (white space and empty members included): what `Cache-Control` and the request values a
/// cache compares for `Vary` are both read with.
enum FieldList {
    static func members(_ value: String) -> [String] {
        var members: [String] = []
        var current = ""
        var quoted = false
        for character in value {
            if character == "\"" { quoted.toggle() }
            if character == ",", !quoted {
                members.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        members.append(current)
        return members
    }
}
