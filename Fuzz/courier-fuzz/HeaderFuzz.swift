import Courier
import Foundation
import HTTPTypes

/// Header validation: a field is accepted exactly when its name is an RFC 9110 token and its value holds no
/// control character but tab, and an accepted field is sent as given (less the white space around it).
enum HeaderFuzz {
    private static let tokenSymbols = Set("!#$%&'*+-.^_`|~".unicodeScalars)

    static func run(_ input: FuzzInput) throws(InvariantViolation) {
        let pieces = input.strings(2)
        let (name, value) = (pieces[0], pieces[1])
        let field = try? HeaderValidation.field(name: name, value: value)
        let isToken =
            !name.isEmpty
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || tokenSymbols.contains($0))
            }
        let isCleanValue = value.unicodeScalars.allSatisfy { ($0.value >= 0x20 || $0 == "\t") && $0.value != 0x7F }
        try require(
            (field != nil) == (isToken && isCleanValue),
            "\(name.debugDescription): \(value.debugDescription) was \(field == nil ? "refused" : "accepted")"
        )
        if let field {
            // Leading and trailing spaces and tabs are not part of a field value (RFC 9110 §5.5); HTTPTypes drops them.
            let trimmed = value.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            try require(
                field.name.rawName == name && field.value == trimmed,
                "the accepted field differs from what was given"
            )
        }
    }
}
