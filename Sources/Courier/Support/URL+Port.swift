#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

extension URL {
    /// Why this URL's port cannot be connected to, or `nil` when it can: no port, an empty one (the scheme's
    /// default, RFC 3986 §3.2.3), or 1 to 65535.
    ///
    /// Checked before a dependency sees the URL: NIO's `SocketAddress` traps on a port past 65535, and Foundation
    /// reads a port too long for an `Int` as no port at all, which would silently connect to port 80.
    package var portProblem: String? {
        if let port { return (1...65_535).contains(port) ? nil : "the port \(port) is not a number from 1 to 65535" }
        guard let written = Self.writtenPort(absoluteString), !written.isEmpty else { return nil }
        return "the port \(CourierError.printable(String(written))) is not a number from 1 to 65535"
    }

    /// The text after the host's colon in `text`'s authority (`""` for `http://h:/`), `nil` when it has no colon.
    static func writtenPort(_ text: String) -> Substring? {
        guard let schemeEnd = text.firstRange(of: "://") else { return nil }
        var authority = text[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            authority = authority[authority.index(after: close)...]
        } else if let colon = authority.firstIndex(of: ":") {
            authority = authority[colon...]
        } else {
            return nil
        }
        guard authority.first == ":" else { return nil }
        return authority.dropFirst()
    }
}
