import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// curl's `-D FILE`: the status line and the headers as received, written to a file (or `-`, standard output).
enum HeaderDump {
    /// Writes `text` to `path`, replacing what was there; an ``OutputFailure`` when it cannot.
    static func write(_ text: String, to path: String) throws {
        if path == "-" { return try Output.stdoutText(text) }
        do { try Data(text.utf8).write(to: URL(filePath: path)) } catch {
            throw OutputFailure(message: "cannot write \"\(path)\": \(SystemErrorText.describe(error))")
        }
    }
}
