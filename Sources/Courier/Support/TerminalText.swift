#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Text a server controls, made safe to print on a terminal or in a log: every control character but tab (C0,
/// DEL and the C1 range, which holds the 8-bit CSI) becomes `\xNN`, so a body can neither move the cursor, change
/// colours or the window title, nor start a line that looks like one of Courier's own.
package enum TerminalText {
    /// `text` with its control characters escaped; at most `limit` characters (Unicode scalars) of it, then `…`.
    package static func escaped(_ text: String, limit: Int = .max) -> String {
        var out = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit {
                out += "…"
                break
            }
            count += 1
            if isControl(scalar) {
                out += "\\x" + (scalar.value < 16 ? "0" : "") + String(scalar.value, radix: 16, uppercase: true)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether `text` holds nothing ``escaped(_:limit:)`` would change, so the common case copies nothing.
    package static func isSafe(_ text: String) -> Bool { !text.unicodeScalars.contains(where: isControl) }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
    }
}
