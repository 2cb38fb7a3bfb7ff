import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// xh's (and HTTPie's) request items, the words after the URL: each is a name, a separator and a value.
///
/// | item | meaning |
/// |---|---|
/// | `name==value` | a query parameter |
/// | `Name:value` | a header; `Name:` removes a default one, `Name;` sends it empty |
/// | `name=value` | a JSON string field (a form field when a file item makes the body a form) |
/// | `name:=json` | a raw JSON field (`42`, `true`, `[1,2]`) |
/// | `name=@FILE`, `name:=@FILE` | the field's value read from a file |
/// | `name@FILE` | a file, which makes the body `multipart/form-data` |
///
/// The first separator in the item decides, the longest at its place; a backslash makes the next character
/// ordinary (`a\:b=c` is the field `a:b`).
struct RequestItems {
    /// A body field's value; one from a file is read when the body is made, so parsing the items reads nothing
    /// (and `name=@-` reads standard input once).
    enum Value {
        case string(String)
        case stringFromFile(path: String)
        case json(String)
        case jsonFromFile(path: String)

        var isJSON: Bool {
            switch self {
            case .json, .jsonFromFile: true
            case .string, .stringFromFile: false
            }
        }

        /// The value as text, read from its file when it comes from one (checked to be JSON for a JSON field).
        func text(name: String) throws -> String {
            switch self {
            case .string(let text), .json(let text): text
            case .stringFromFile(let path): try CommandLineInput.readText(path)
            case .jsonFromFile(let path): try checkedJSON(CommandLineInput.readText(path), name: name)
            }
        }
    }

    private(set) var query: [(name: String, value: String)] = []
    /// Headers to send, as `-H` takes them (`Name: value`, `Name:` to remove).
    private(set) var headers: [String] = []
    private(set) var fields: [(name: String, value: Value)] = []
    private(set) var files: [(name: String, path: String)] = []

    private static let separators = [":=@", "==", ":=", "=@", "=", ":", "@"]

    init(_ items: [String]) throws {
        for item in items { try add(item) }
        if !files.isEmpty, let raw = fields.first(where: \.value.isJSON) {
            throw UsageError(
                option: "request item",
                message: "\(CourierError.printable(raw.name)):= is a JSON field, but a file item makes the body a form"
            )
        }
    }

    /// Whether the items give a body.
    var givesBody: Bool { !fields.isEmpty || !files.isEmpty }

    /// The body: a JSON object of the fields in the order given, or a multipart form when a file is among them.
    func body() throws -> RequestBody? {
        if !files.isEmpty {
            var form = MultipartFormData()
            for field in fields { try form.append(field: field.name, value: field.value.text(name: field.name)) }
            for file in files {
                try CommandLineInput.checkReadable(file.path)
                try form.append(file: URL(filePath: file.path), name: file.name)
            }
            return try .multipart(form)
        }
        guard !fields.isEmpty else { return nil }
        let members = try fields.map { field in
            let text = try field.value.text(name: field.name)
            return try jsonString(field.name) + ":" + (field.value.isJSON ? text : jsonString(text))
        }
        return .bytes(Data(("{" + members.joined(separator: ",") + "}").utf8), contentType: "application/json")
    }

    private mutating func add(_ item: String) throws {
        guard let (name, separator, value) = Self.split(item), !name.isEmpty else {
            throw UsageError(
                option: "request item",
                message: "\"\(CourierError.printable(item, limit: 60))\" is not one of name=value, name:=json, "
                    + "name==value, Name:value, name@file"
            )
        }
        switch separator {
        case "==": query.append((name, value))
        case ":": headers.append(value.isEmpty ? name + ":" : name + ": " + value)
        case ";": headers.append(name + ": ")
        case "=": fields.append((name, .string(value)))
        case "=@": fields.append((name, .stringFromFile(path: value)))
        case ":=": fields.append((name, .json(try checkedJSON(value, name: name))))
        case ":=@": fields.append((name, .jsonFromFile(path: value)))
        default: files.append((name, value))
        }
        if name.contains("[") && (separator == "=" || separator == ":=") {
            throw UsageError(
                option: "request item",
                message: "nested JSON paths such as \(CourierError.printable(name)) are not supported: use --json"
            )
        }
    }

    /// The name, the separator and the value of `item`; `Name;` is an empty header. `nil` without a separator.
    static func split(_ item: String) -> (name: String, separator: String, value: String)? {
        var name = ""
        var index = item.startIndex
        while index < item.endIndex {
            let character = item[index]
            if character == "\\", item.index(after: index) < item.endIndex {
                name.append(item[item.index(after: index)])
                index = item.index(index, offsetBy: 2)
                continue
            }
            if let separator = separators.first(where: { item[index...].hasPrefix($0) }) {
                return (name, separator, String(item[item.index(index, offsetBy: separator.count)...]))
            }
            if character == ";", item.index(after: index) == item.endIndex { return (name, ";", "") }
            name.append(character)
            index = item.index(after: index)
        }
        return nil
    }

    private func jsonString(_ text: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        return String(decoding: try encoder.encode(text), as: UTF8.self)
    }
}

/// `text` trimmed, once it is checked to be JSON; a usage error naming the `name:=` item otherwise.
private func checkedJSON(_ text: String, name: String) throws -> String {
    let trimmed = text.trimmingWhitespace()
    guard ParameterValue.isJSON(Data(trimmed.utf8)) else {
        throw UsageError(option: "\(CourierError.printable(name)):=", message: "the value is not valid JSON")
    }
    return trimmed
}
