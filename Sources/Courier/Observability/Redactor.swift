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
    public func redact(body text: String) -> String {
        let keys = sensitiveKeys.union(sensitiveHeaders.map { $0.canonicalName.lowercased() })
        guard !keys.isEmpty else { return text }
        // One alternation of every key (longest first, so `signature` is tried before `sign`), compiled once per
        // call for each of the two forms, where a pattern per key compiled 2 × 17 of them for the defaults.
        let anyKey =
            "(?:" + keys.sorted { ($0.count, $0) > ($1.count, $1) }.map(Self.escapedPattern).joined(separator: "|")
            + ")"
        let quote = #"\\?""#
        let jsonValue = #"(?:\\?"(?:[^"\\]|\\.)*?\\?"|[^,}\]\s]+)"#
        var result = Self.replace(
            in: text,
            pattern: "(\(quote)\(anyKey)\(quote)\\s*:\\s*\\[?\\s*)\(jsonValue)",
            keepingFirstGroupThen: "\"\(placeholder)\""
        )
        result = Self.replace(
            in: result,
            pattern: "((?:^|[&?])\(anyKey)=)[^&\\s]*",
            keepingFirstGroupThen: placeholder
        )
        return result
    }

    private func isSensitive(key: String) -> Bool {
        let lowered = key.lowercased()
        return sensitiveKeys.contains(lowered) || sensitiveKeys.contains(where: { lowered.hasSuffix("[\($0)]") })
    }

    /// `text` with each case-insensitive match of `pattern` replaced by its first group and `replacement`.
    private static func replace(in text: String, pattern: String, keepingFirstGroupThen replacement: String) -> String {
        guard let regex = try? Regex(pattern).ignoresCase() else { return text }
        return text.replacing(regex) { match in (match.output[1].substring ?? "") + replacement }
    }

    /// `literal` with the characters a regular expression gives a meaning to escaped.
    private static func escapedPattern(_ literal: String) -> String {
        var out = ""
        for character in literal {
            if "\\^$.|?*+()[]{}".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }
}
