import Courier
import Crypto
import Foundation
import NIOCore

/// `/multipart`: splits a multipart/form-data body on its boundary and describes each part as JSON
/// (name, filename, content type, length, SHA-256), so a test can check what arrived.
enum MultipartEcho {
    static func describe(_ request: ServerRequest) -> String {
        guard let contentType = request.header("Content-Type"),
              let boundaryRange = contentType.range(of: "boundary=")
        else { return "{\"error\":\"not multipart\"}" }
        let boundary = String(contentType[boundaryRange.upperBound...]).trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        let body = Data(request.body.readableBytesView)
        let delimiter = Data("--\(boundary)".utf8)
        var parts: [[String: Any]] = []
        var searchStart = body.startIndex
        var sections: [Range<Data.Index>] = []
        var previous: Data.Index?
        while let found = body.range(of: delimiter, in: searchStart..<body.endIndex) {
            if let previous { sections.append(previous..<found.lowerBound) }
            previous = found.upperBound
            searchStart = found.upperBound
        }
        for section in sections {
            var part = body[section]
            if part.starts(with: Data("\r\n".utf8)) { part = part.dropFirst(2) }
            if part.suffix(2) == Data("\r\n".utf8) { part = part.dropLast(2) }
            guard let split = part.range(of: Data("\r\n\r\n".utf8)) else { continue }
            let headerText = String(decoding: part[part.startIndex..<split.lowerBound], as: UTF8.self)
            let content = part[split.upperBound...]
            var description: [String: Any] = ["length": content.count,
                                              "sha256": Hex.string(SHA256.hash(data: content))]
            for line in headerText.components(separatedBy: "\r\n") {
                let lower = line.lowercased()
                if lower.hasPrefix("content-disposition:") {
                    if let name = value(of: "name", in: line) { description["name"] = name }
                    if let filename = value(of: "filename", in: line) { description["filename"] = filename }
                } else if lower.hasPrefix("content-type:") {
                    description["contentType"] = line.dropFirst("content-type:".count).trimmingCharacters(in: .whitespaces)
                }
            }
            parts.append(description)
        }
        let data = (try? JSONSerialization.data(withJSONObject: ["parts": parts], options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private static func value(of key: String, in line: String) -> String? {
        guard let range = line.range(of: " \(key)=\"") ?? line.range(of: ";\(key)=\"") else { return nil }
        let rest = line[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }
}
