import Crypto
public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What identifies a cached answer: the cache's namespace, the method, the URL (scheme and host lowercased, the
/// query byte for byte), and a digest of the body when there is one. The request headers a response varies on (`Vary`) are checked
/// against the stored entry, not put in the key, so one URL keeps one entry.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The key as text: `namespace method url[ body-digest]`. Stored in each entry, so a foreign or renamed
    /// file is recognised.
    public let text: String

    /// The key for `method` on `url` plus `parameters` (added to the query, as GET sends them), in `namespace`.
    public init(method: HTTPRequest.Method = .get, url: URL, parameters: Parameters = [:], namespace: String = "") {
        let full = parameters.isEmpty ? url : URLBuilder.appending(parameters, to: url)
        self.init(method: method, normalizedURL: Self.normalize(full), bodyDigest: nil, namespace: namespace)
    }

    /// The key of a prepared request, or `nil` when its body cannot be keyed (a file or a stream).
    init?(_ request: PreparedRequest, namespace: String) {
        let digest: String?
        switch request.body {
        case .empty: digest = nil
        case .bytes(let data): digest = data.isEmpty ? nil : Hex.string(SHA256.hash(data: data))
        case .file, .stream: return nil
        }
        self.init(
            method: request.method,
            normalizedURL: Self.normalize(request.url),
            bodyDigest: digest,
            namespace: namespace,
            credentialDigest: Self.credentialDigest(request.headers)
        )
    }

    private init(
        method: HTTPRequest.Method,
        normalizedURL: String,
        bodyDigest: String?,
        namespace: String,
        credentialDigest: String? = nil
    ) {
        var text = "\(namespace) \(method.rawValue) \(normalizedURL)"
        if let bodyDigest { text += " body:\(bodyDigest)" }
        if let credentialDigest { text += " credentials:\(credentialDigest)" }
        self.text = text
    }

    /// The request fields that say who is asking: an answer to one caller's credentials is never another's.
    static let credentialFields: [HTTPField.Name] = [
        .authorization, .cookie, HTTPField.Name("X-Api-Key")!, HTTPField.Name("X-Auth-Token")!,
    ]

    /// Whether `headers` carry any of ``credentialFields``.
    static func hasCredentials(_ headers: HTTPFields) -> Bool {
        credentialFields.contains { headers.contains($0) }
    }

    /// The SHA-256 of the credential fields of `headers`, names and values; `nil` when there are none. Only the
    /// digest enters the key (which every stored entry holds), never the credential itself.
    static func credentialDigest(_ headers: HTTPFields) -> String? {
        guard hasCredentials(headers) else { return nil }
        var hasher = SHA256()
        for name in credentialFields {
            for value in headers[values: name] { hasher.update(data: Data("\(name.canonicalName): \(value)\n".utf8)) }
        }
        return Hex.string(hasher.finalize())
    }

    /// The key of one variant of this key's answer: the request's values of the fields the answer varies on
    /// (`Vary`), normalized, as a SHA-256 beside the key.
    func variant(_ values: [String: String]) -> CacheKey {
        var hasher = SHA256()
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            hasher.update(data: Data("\(name): \(value)\n".utf8))
        }
        return CacheKey(text: text + " vary:" + Hex.string(hasher.finalize()))
    }

    /// Creates a key from its text, as ``CacheEntry/key`` holds it.
    public init(text: String) {
        self.text = text
    }

    /// The same as ``text``.
    public var description: String { text }

    /// The SHA-256 of the text in lowercase hex: the disk store's file name for the entry.
    package var digest: String { Hex.string(SHA256.hash(data: Data(text.utf8))) }

    /// `url` with a lowercase scheme and host and no fragment; its query byte for byte. Servers read `?q=a+b` and
    /// `?q=a%2Bb`, `?x=1&x=2` and `?x=2&x=1`, `?k` and `?k=` differently, so a cache must not merge them. The
    /// parameters Courier adds from a dictionary are already one way (escaped one way, keys sorted: see
    /// `FormEncoding`), so the same dictionary always gives the same key.
    static func normalize(_ url: URL) -> String {
        let text = url.absoluteString
        return isNormal(text) ? text : rebuilt(url)
    }

    /// `url` in the normal form: scheme and host lowercased, the fragment dropped, everything else as written.
    static func rebuilt(_ url: URL) -> String {
        var text = Substring(url.absoluteString)
        if let hash = text.firstIndex(of: "#") { text = text[..<hash] }
        guard let colon = text.firstIndex(of: ":") else { return String(text) }
        let scheme = text[..<colon].lowercased()
        let rest = text[colon...]
        guard rest.hasPrefix("://") else { return scheme + rest }
        let authorityStart = rest.index(rest.startIndex, offsetBy: 3)
        let authorityEnd = rest[authorityStart...].firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[authorityStart..<authorityEnd]
        let hostStart = authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
        return scheme + "://" + authority[..<hostStart] + authority[hostStart...].lowercased() + rest[authorityEnd...]
    }

    /// Whether `text`, an absolute URL's string, is already in the form ``normalize(_:)`` gives: lowercase scheme
    /// and authority and no fragment. Most keys are, and taking a URL apart and putting it back together cost
    /// more than the rest of a memory cache hit together.
    static func isNormal(_ text: String) -> Bool {
        var slashesAfterScheme = -1  // counts the two slashes of "://", then the authority runs to the next slash
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "#"): return false
            case _ where slashesAfterScheme >= 3: continue  // path and query: kept as written
            case UInt8(ascii: "?"): if slashesAfterScheme < 2 { return false } else { slashesAfterScheme = 3 }
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): return false
            case UInt8(ascii: ":") where slashesAfterScheme < 0: slashesAfterScheme = 0
            case UInt8(ascii: "/") where slashesAfterScheme >= 0: slashesAfterScheme += 1
            default: if slashesAfterScheme == 0 || slashesAfterScheme == 1 { return false }  // not "scheme://"
            }
        }
        return slashesAfterScheme >= 2
    }

    /// `url` without query or fragment: what "every entry for a URL" compares.
    static func baseURL(of text: String) -> String {
        String(text.prefix { $0 != "?" && $0 != "#" })
    }
}
