import Courier
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the CLI shows of an answer before its body: the status line and the headers (`-i`, `-I`, `head`), coloured
/// as xh colours them when asked.
struct ResponseHeadText {
    var version: String?
    var status: HTTPResponse.Status
    var headers: HTTPFields

    /// `HTTP/1.1 200 OK` and one `Name: value` line per field, ending with a blank line, as curl prints them.
    /// Without a version from the transport (a cached answer), the line starts with `HTTP` alone.
    /// On a terminal, control characters in values are escaped (``TerminalText``).
    ///
    /// Over HTTP/2 the line is `HTTP/2 200`, as curl prints it: HTTP/2 has no reason phrase and no
    /// `Transfer-Encoding` (RFC 9113 §8.2.2, §8.3.2), so the ones the HTTP/1 form of the answer carries were made
    /// on the way and are left out. (SwiftNIO's HTTP/1.1 parser keeps no reason phrase either: an HTTP/1.1 line
    /// shows the standard phrase of its code, whatever the server wrote.)
    func text(colours: Bool, onTerminal: Bool) -> String {
        let isHTTP2 = version == "HTTP/2"
        let phrase = isHTTP2 ? "" : status.reasonPhrase
        let statusColour =
            switch status.code {
            case 200..<300: "\u{1B}[32m"
            case 300..<400: "\u{1B}[36m"
            default: "\u{1B}[31m"
            }
        let reset = colours ? "\u{1B}[0m" : ""
        var text =
            "\(version ?? "HTTP") \(colours ? statusColour : "")\(status.code)\(phrase.isEmpty ? "" : " " + (onTerminal ? TerminalText.escaped(phrase) : phrase))\(reset)\r\n"
        for field in headers where !(isHTTP2 && field.name == .transferEncoding) {
            let name = colours ? "\u{1B}[36m\(field.name.rawName)\(reset)" : field.name.rawName
            text += "\(name): \(onTerminal ? TerminalText.escaped(field.value) : field.value)\r\n"
        }
        return text + "\r\n"
    }
}
