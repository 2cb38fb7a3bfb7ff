public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Decides what never reaches a log: credential headers, and values of sensitive keys in URLs and bodies.
///
/// Authorization, Cookie, Set-Cookie, Proxy-Authorization, X-Api-Key and X-Auth-Token are always hidden; add your
/// own header names and parameter keys (`token`, `password`, … are there by default).
public struct Redactor: Sendable, Hashable {
    /// Header names whose values are replaced.
    public var sensitiveHeaders: Set<HTTPField.Name>
    /// Parameter and JSON keys whose values are replaced, compared case-insensitively.
    public var sensitiveKeys: Set<String>
    /// What replaces a hidden value.
    public var placeholder: String
    /// Hide the value of every field marked never to be indexed (`HTTPField.indexingStrategy` `.disallow`):
    /// the credential an ``Authenticator`` puts on a request is. On, except in ``none``.
    public var hidesUnindexedFields = true

    /// Creates a redactor.
    public init(
        sensitiveHeaders: Set<HTTPField.Name> = Redactor.credentialHeaders,
        sensitiveKeys: Set<String> = [
            "token", "access_token", "refresh_token", "password", "passwd", "secret",
            "api_key", "apikey", "client_secret", "signature", "sign",
        ],
        placeholder: String = "<redacted>"
    ) {
        self.sensitiveHeaders = sensitiveHeaders.union(Redactor.credentialHeaders)
        self.sensitiveKeys = Set(sensitiveKeys.map { $0.lowercased() })
        self.placeholder = placeholder
    }

    /// Headers that carry credentials; always redacted. Add more names to ``sensitiveHeaders``.
    public static let credentialHeaders: Set<HTTPField.Name> = [
        .authorization, .cookie, .setCookie, .proxyAuthorization,
        HTTPField.Name("X-Api-Key")!, HTTPField.Name("X-Auth-Token")!,
    ]

    /// The default redactor.
    public static let standard = Redactor()

    /// Hides nothing. Use it only for output that never leaves the user's terminal.
    public static let none: Redactor = {
        var redactor = Redactor()
        redactor.sensitiveHeaders = []
        redactor.sensitiveKeys = []
        redactor.hidesUnindexedFields = false
        return redactor
    }()

    /// The header's value, or the placeholder when the header is sensitive: named in ``sensitiveHeaders``, or
    /// marked never to be indexed (`indexingStrategy` `.disallow`, as an ``Authenticator``'s credential is),
    /// while ``hidesUnindexedFields``. A header whose value is a URL (`Location`, `Content-Location`, `Referer`)
    /// has its credentials and sensitive query values hidden as ``redact(urlText:)`` hides them.
    public func redact(_ field: HTTPField) -> String {
        let hidden =
            sensitiveHeaders.contains(field.name) || (hidesUnindexedFields && field.indexingStrategy == .disallow)
        if hidden { return placeholder }
        switch field.name {
        case .location, .contentLocation, .referer: return redact(urlText: field.value)
        default: return field.value
        }
    }

    /// Headers as `Name: value` lines, sensitive values hidden.
    public func redact(_ fields: HTTPFields) -> String {
        fields.map { "\($0.name.rawName): \(redact($0))" }.joined(separator: "\n")
    }

    /// The URL with its credentials and sensitive query values hidden; text for logs, not a URL to send.
    public func redact(url: URL) -> String {
        redact(urlText: url.absoluteString)
    }

    /// A URL as written (it need not parse) with its credentials and sensitive query values hidden: the password of
    /// `user:password@`, or the whole of a user part with no password (`http://TOKEN@host`, how API tokens travel),
    /// and the values of ``sensitiveKeys`` in the query.
    public func redact(urlText: String) -> String {
        var text = urlText
        if let schemeEnd = text.firstRange(of: "://") {
            let authorityEnd =
                text[schemeEnd.upperBound...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
            if let at = text[schemeEnd.upperBound..<authorityEnd].lastIndex(of: "@") {
                let user = text[schemeEnd.upperBound..<at]
                let secret = user.firstIndex(of: ":").map { text.index(after: $0)..<at } ?? schemeEnd.upperBound..<at
                if !text[secret].isEmpty { text.replaceSubrange(secret, with: placeholder) }
            }
        }
        guard !sensitiveKeys.isEmpty, let queryStart = text.firstIndex(of: "?") else { return text }
        let fragmentStart = text[queryStart...].firstIndex(of: "#") ?? text.endIndex
        let query = text[text.index(after: queryStart)..<fragmentStart]
        return String(text[...queryStart]) + redact(query: String(query)) + String(text[fragmentStart...])
    }

    /// A form-encoded query (`a=1&token=x`) with the values of sensitive keys hidden.
    func redact(query: String) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let name = pair.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
            return isSensitive(key: PercentEncoding.decode(name) ?? name) ? "\(name)=\(placeholder)" : String(pair)
        }.joined(separator: "&")
    }

    /// Text with `"key": value` (JSON, also inside an escaped JSON string) and `key=value` (form) pairs of
    /// sensitive keys hidden. Sensitive header names count as keys too, so an echoed header stays hidden.
    ///
    /// One pass over the text for each form, in time linear in its length whatever a server put in it (a
    /// backtracking expression took minutes on a body of spaces after a key).
    public func redact(body text: String) -> String {
        let keys = sensitiveKeys.union(sensitiveHeaders.map { $0.canonicalName.lowercased() })
        guard !keys.isEmpty else { return text }
        // Longest first, so `signature` is tried before `sign`.
        let keyBytes = keys.sorted { ($0.count, $0) > ($1.count, $1) }.map { Array($0.utf8) }
        let replacement = Array(placeholder.utf8)
        var scanner = BodyRedaction(text: Array(text.utf8), keys: keyBytes)
        let json = scanner.redactingJSONValues(with: Array("\"\(placeholder)\"".utf8))
        if let json { scanner = BodyRedaction(text: json, keys: keyBytes) }
        guard let redacted = scanner.redactingFormValues(with: replacement) ?? json else { return text }
        return String(decoding: redacted, as: UTF8.self)
    }

    private func isSensitive(key: String) -> Bool {
        let lowered = key.lowercased()
        return sensitiveKeys.contains(lowered) || sensitiveKeys.contains(where: { lowered.hasSuffix("[\($0)]") })
    }
}

/// The scan behind ``Redactor/redact(body:)``: finds `"key": value` and `key=value` pairs of the keys (lowercase
/// UTF-8, compared case-insensitively in ASCII) and replaces their values, each position looked at a bounded number
/// of times.
private struct BodyRedaction {
    let text: [UInt8]
    let keys: [[UInt8]]

    private static let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    /// The end of the key that starts at `index`, the longest that matches.
    private func key(at index: Int) -> Int? {
        for key in keys where index + key.count <= text.count {
            var matches = true
            for (offset, byte) in key.enumerated() {
                var candidate = text[index + offset]
                if (0x41...0x5A).contains(candidate) { candidate |= 0x20 }
                if candidate != byte {
                    matches = false
                    break
                }
            }
            if matches { return index + key.count }
        }
        return nil
    }

    /// The end of a quote (`"` or an escaped `\"`) at `index`.
    private func quoteEnd(at index: Int) -> Int? {
        if index < text.count, text[index] == Self.quote { return index + 1 }
        if index + 1 < text.count, text[index] == Self.backslash, text[index + 1] == Self.quote { return index + 2 }
        return nil
    }

    /// `"key"` (its quotes escaped or not), `:`, an optional `[`, spaces between, then a value: a string up to
    /// its first closing quote, or a run up to `,`, `}`, `]` or a space. `nil` when nothing was replaced.
    func redactingJSONValues(with replacement: [UInt8]) -> [UInt8]? {
        var output: [UInt8] = []
        var copied = 0
        var index = 0
        while index < text.count {
            guard let afterOpen = quoteEnd(at: index), let afterKey = key(at: afterOpen),
                let afterClose = quoteEnd(at: afterKey)
            else {
                index += 1
                continue
            }
            var cursor = afterClose
            while cursor < text.count, Self.isSpace(text[cursor]) { cursor += 1 }
            guard cursor < text.count, text[cursor] == UInt8(ascii: ":") else {
                index += 1
                continue
            }
            cursor += 1
            while cursor < text.count, Self.isSpace(text[cursor]) { cursor += 1 }
            if cursor < text.count, text[cursor] == UInt8(ascii: "[") { cursor += 1 }
            while cursor < text.count, Self.isSpace(text[cursor]) { cursor += 1 }
            guard let valueEnd = valueEnd(at: cursor) else {
                index += 1
                continue
            }
            output.append(contentsOf: text[copied..<cursor])
            output.append(contentsOf: replacement)
            copied = valueEnd
            index = valueEnd
        }
        guard copied > 0 else { return nil }
        output.append(contentsOf: text[copied...])
        return output
    }

    /// Where the JSON value at `start` ends: a quoted string at its first closing quote, else a run of bytes other
    /// than `,`, `}`, `]` and spaces; `nil` for neither.
    private func valueEnd(at start: Int) -> Int? {
        if let afterOpen = quoteEnd(at: start) {
            var cursor = afterOpen
            while cursor < text.count {
                if let closed = quoteEnd(at: cursor) { return closed }
                if text[cursor] == Self.backslash {
                    // An escape takes the next byte, but not a line break.
                    guard cursor + 1 < text.count, text[cursor + 1] != 0x0A else { break }
                    cursor += 2
                } else {
                    cursor += 1
                }
            }
        }
        var cursor = start
        while cursor < text.count, !Self.isSpace(text[cursor]), text[cursor] != UInt8(ascii: ","),
            text[cursor] != UInt8(ascii: "}"), text[cursor] != UInt8(ascii: "]")
        {
            cursor += 1
        }
        return cursor > start ? cursor : nil
    }

    /// `key=value` at the start of the text or after `&` or `?`, the value up to `&` or a space. `nil` when
    /// nothing was replaced.
    func redactingFormValues(with replacement: [UInt8]) -> [UInt8]? {
        var output: [UInt8] = []
        var copied = 0
        var index = 0
        while index < text.count {
            let startsPair = index == 0 || text[index - 1] == UInt8(ascii: "&") || text[index - 1] == UInt8(ascii: "?")
            guard startsPair, let afterKey = key(at: index), afterKey < text.count, text[afterKey] == UInt8(ascii: "=")
            else {
                index += 1
                continue
            }
            var end = afterKey + 1
            while end < text.count, text[end] != UInt8(ascii: "&"), !Self.isSpace(text[end]) { end += 1 }
            output.append(contentsOf: text[copied...afterKey])
            output.append(contentsOf: replacement)
            copied = end
            index = end
        }
        guard copied > 0 else { return nil }
        output.append(contentsOf: text[copied...])
        return output
    }
}
