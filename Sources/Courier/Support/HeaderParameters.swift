#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The parameters of a header value such as `Content-Disposition` or `Content-Type`: read by the download
/// manager for file names, and by the test server for multipart boundaries and part names.
package enum HeaderParameters {
    /// The `name=value` pairs after a header's first value (`attachment; filename="a.txt"`,
    /// `multipart/form-data; boundary=x`), names lowercased, quoted values unquoted (with `\` escapes).
    package static func parse(_ header: String) -> [(name: String, value: String)] {
        var result: [(String, String)] = []
        var rest = Substring(header)
        guard let firstSemicolon = rest.firstIndex(of: ";") else { return [] }
        rest = rest[rest.index(after: firstSemicolon)...]
        while !rest.isEmpty {
            rest = rest.drop(while: { $0 == " " || $0 == "\t" || $0 == ";" })
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingSpaces().lowercased()
            rest = rest[rest.index(after: equals)...].drop(while: { $0 == " " })
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped {
                        value.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "\"" {
                        break
                    } else {
                        value.append(character)
                    }
                }
                rest = rest.drop(while: { $0 != ";" })
            } else {
                let end = rest.firstIndex(of: ";") ?? rest.endIndex
                value = rest[..<end].trimmingSpaces()
                rest = rest[end...]
            }
            result.append((name, value))
        }
        return result
    }

    /// The value of the parameter `name` (lowercase), if the header has it.
    package static func value(_ name: String, in header: String) -> String? {
        parse(header).first { $0.name == name }?.value
    }
}
