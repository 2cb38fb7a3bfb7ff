import Courier
import Foundation

/// Download file names: whatever a server or URL says, the name is one safe component and the file stays in
/// the chosen directory.
enum FileNameFuzz {
    private static let folder = URL(filePath: "/fuzz/downloads", directoryHint: .isDirectory)

    static func run(_ input: FuzzInput) throws(InvariantViolation) {
        let text = input.text
        let name = DownloadFileName.sanitize(text)
        try requireSafe(name, from: "sanitize")
        try require(DownloadFileName.sanitize(name) == name, "sanitising \(name.debugDescription) again changes it")
        if let file = try? DownloadFileName.destination(for: text, in: folder) {
            try require(
                file.deletingLastPathComponent().path == folder.standardizedFileURL.path,
                "\(file.path) leaves the folder"
            )
        }
        if let url = URL(string: "http://example.com/files/report.pdf") {
            try requireSafe(DownloadFileName.suggested(contentDisposition: text, url: url), from: "Content-Disposition")
        }
        if let url = URL(string: "http://example.com/" + text) {
            try requireSafe(DownloadFileName.suggested(contentDisposition: nil, url: url), from: "the URL")
        }
    }

    private static func requireSafe(_ name: String, from source: String) throws(InvariantViolation) {
        // Scalars and bytes, not Characters: "/" or "." followed by a combining mark is another Character.
        let problem: String? =
            if name.isEmpty { "is empty" } else if name.unicodeScalars.contains(where: { $0 == "/" || $0 == "\\" }) {
                "holds a path separator"
            } else if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                "holds a control character"
            } else if name.utf8.first == UInt8(ascii: ".") { "starts with a dot" } else if name.utf8.count > 255 {
                "is longer than 255 bytes"
            } else { nil }
        if let problem {
            throw InvariantViolation(description: "the name from \(source), \(name.debugDescription), \(problem)")
        }
    }
}
