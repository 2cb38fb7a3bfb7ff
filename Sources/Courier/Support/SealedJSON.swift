import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A record on disk that says when it is damaged: `<magic><SHA-256 of the JSON>\n<JSON>`. What downloads and
/// resumable uploads keep beside their files, written atomically; a record cut short or changed reads as absent.
enum SealedJSON {
    /// `value` as sorted-key JSON behind its header line.
    static func seal<Value: Encodable>(_ value: Value, magic: String) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return seal(json: try encoder.encode(value), magic: magic)
    }

    /// `json` behind the header line that names its digest.
    static func seal(json: Data, magic: String) -> Data {
        Data((magic + Hex.string(SHA256.hash(data: json)) + "\n").utf8) + json
    }

    /// The value in `data`, or `nil` when it is truncated, damaged or foreign.
    static func open<Value: Decodable>(_ type: Value.Type, from data: Data, magic: String) -> Value? {
        guard let newline = data.firstIndex(of: UInt8(ascii: "\n")),
            let header = String(data: data[data.startIndex..<newline], encoding: .utf8), header.hasPrefix(magic)
        else { return nil }
        let json = data[data.index(after: newline)...]
        guard header.dropFirst(magic.count) == Hex.string(SHA256.hash(data: json)) else { return nil }
        return try? JSONDecoder().decode(type, from: json)
    }
}
