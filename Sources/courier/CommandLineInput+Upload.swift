import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CommandLineInput {
    /// `none`, `gzip`, `deflate` (optionally `gzip:LEVEL`), `adaptive` or `target:SIZE` as a compression
    /// setting; `nil` for `none`. Named codings compress any size; `adaptive` keeps the 150 KB floor.
    static func payloadCompression(_ text: String) throws -> PayloadCompression? {
        let lower = text.trimmingSpaces().lowercased()
        let (name, argument) =
            lower.firstIndex(of: ":").map { (String(lower[..<$0]), String(lower[lower.index(after: $0)...])) } ?? (
                lower, nil
            )
        switch (name, argument) {
        case ("none", nil): return nil
        case ("adaptive", nil): return .adaptive()
        case ("target", let size?): return .targetSize(Int64(try byteSize(size)))
        case ("gzip", _), ("deflate", _):
            let level =
                try argument.map { text -> Int in
                    guard let level = Int(text), (1...9).contains(level) else {
                        throw CourierError(
                            code: .invalidParameter,
                            message: "the compression level must be 1 to 9, not \"\(CourierError.printable(text))\""
                        )
                    }
                    return level
                } ?? 6
            return PayloadCompression(
                encoding: name == "gzip" ? .gzip : .deflate,
                strategy: .fixed(level: level),
                minimumBytes: 0
            )
        default:
            throw CourierError(
                code: .invalidParameter,
                message:
                    "\"\(CourierError.printable(text))\" is not a compression: use none, gzip, deflate, gzip:LEVEL, adaptive or target:SIZE"
            )
        }
    }

    /// An upload body as curl spells it: `--file name=@PATH` parts and `--field key=value` fields make a
    /// multipart form; `--data @PATH` sends a file as it is, `--data TEXT` the text. Form files are checked
    /// to be readable now, a `--data` file when the body is prepared, before anything is sent
    /// (``CourierError/Code/fileAccess`` either way); mixing the two kinds or giving neither is
    /// ``CourierError/Code/invalidParameter``.
    static func uploadBody(files: [String], fields: [String], data: String?) throws -> RequestBody {
        if let data {
            guard files.isEmpty, fields.isEmpty else {
                throw UsageError(
                    option: "--data",
                    message: "--data sends one body; it does not mix with --file or --field"
                )
            }
            guard data.hasPrefix("@") else { return .text(data, contentType: "application/octet-stream") }
            // The type from the file's name; standard input (`-`, no extension) is application/octet-stream.
            return try streamed(String(data.dropFirst())) { MIMEType.forFileName(URL(filePath: $0).lastPathComponent) }
        }
        guard !files.isEmpty || !fields.isEmpty else {
            throw UsageError(
                option: "upload",
                message: "nothing to upload: give --file name=@PATH, --field key=value or --data @PATH"
            )
        }
        var form = MultipartFormData()
        for pair in fields {
            let (name, value) = try split(pair, what: "--field", example: "key=value")
            try UsageError.parsing("--field") { try form.append(field: name, value: value) }
        }
        for pair in files {
            let (name, value) = try split(pair, what: "--file", example: "name=@PATH")
            guard value.hasPrefix("@"), value.count > 1 else {
                throw UsageError(
                    option: "--file",
                    message: "--file takes name=@PATH, not \"\(CourierError.printable(pair))\""
                )
            }
            try checkReadable(String(value.dropFirst()))
            try UsageError.parsing("--file") {
                try form.append(file: URL(filePath: String(value.dropFirst())), name: name)
            }
        }
        return try form.body()
    }

    private static func split(_ pair: String, what: String, example: String) throws -> (String, String) {
        guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
            throw UsageError(option: what, message: "\(what) takes \(example), not \"\(CourierError.printable(pair))\"")
        }
        return (String(pair[..<equals]), String(pair[pair.index(after: equals)...]))
    }
}
