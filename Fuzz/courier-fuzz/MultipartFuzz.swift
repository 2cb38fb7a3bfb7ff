import Courier
import Foundation

/// Multipart framing: no field name, file name, content type or part header can add a line, end the header
/// block early or start a boundary; names and part headers that could are refused, and nothing else is.
enum MultipartFuzz {
    private static let boundary = "fuzz-boundary"

    static func run(_ input: FuzzInput) throws(InvariantViolation) {
        let pieces = input.strings(5)
        let (name, fileName, contentType, headerName, headerValue) = (
            pieces[0], pieces[1], pieces[2], pieces[3], pieces[4]
        )
        var form = MultipartFormData(boundary: boundary)
        let nameIsBad = hasControlCharacter(name)
        do {
            try form.append(field: name, value: "value")
            try require(!nameIsBad, "a field name with a control character was accepted")
        } catch {
            try require(nameIsBad, "a field name without a control character was refused: \(error)")
        }
        let extra = headerName.isEmpty ? [] : [(name: headerName, value: headerValue)]
        do {
            try form.append(
                data: Data("content".utf8),
                name: name,
                fileName: fileName.isEmpty ? nil : fileName,
                contentType: contentType.isEmpty ? nil : contentType,
                headers: extra
            )
        } catch {
            let headerIsBad = extra.contains {
                (try? HeaderValidation.field(name: $0.name, value: $0.value)) == nil
                    || $0.name.utf8.starts(with: ("--" + boundary).utf8)
            }
            let typeIsBad =
                !contentType.isEmpty && (try? HeaderValidation.field(name: "Content-Type", value: contentType)) == nil
            let fileNameIsBad = hasControlCharacter(fileName)
            try require(
                headerIsBad || typeIsBad || nameIsBad || fileNameIsBad,
                "a part with valid names and headers was refused: \(error)"
            )
        }
        for part in form.parts { try checkFraming(part.header) }
    }

    /// The oracle for names, written apart from Courier's: a C0 control other than tab, or DEL.
    private static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
    }

    /// A header block is `--boundary`, a `Content-Disposition` line with only its own quotes, well-formed header
    /// lines, and one blank line at the end; CR and LF only ever as CRLF.
    private static func checkFraming(_ block: Data) throws(InvariantViolation) {
        let bytes = Array(block)
        for (index, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: "\r") {
                try require(index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "\n"), "a bare CR")
            }
            if byte == UInt8(ascii: "\n") {
                try require(index > 0 && bytes[index - 1] == UInt8(ascii: "\r"), "a bare LF")
            }
        }
        // Bytes and scalars, not Characters: CRLF is one Character, and a quote followed by a combining mark is another.
        try require(bytes.suffix(4).elementsEqual("\r\n\r\n".utf8), "the header block does not end with a blank line")
        let lines = String(decoding: bytes.dropLast(4), as: UTF8.self).components(separatedBy: "\r\n")
        try require(lines.first == "--" + boundary, "the block does not start with the boundary")
        try require(
            lines.count >= 2 && lines[1].utf8.starts(with: "Content-Disposition: form-data; name=\"".utf8),
            "no Content-Disposition line"
        )
        let quotes = lines[1].unicodeScalars.filter { $0 == "\"" }.count
        try require(quotes == 2 || quotes == 4, "a name added quotes: \(lines[1].debugDescription)")
        for line in lines.dropFirst(2) {
            let halves = line.split(separator: ":", maxSplits: 1).map(String.init)
            try require(
                halves.count == 2 && (try? HeaderValidation.field(name: halves[0], value: halves[1])) != nil,
                "a malformed header line \(line.debugDescription)"
            )
            try require(!line.utf8.starts(with: ("--" + boundary).utf8), "a header line starts a boundary")
        }
    }
}
