public import Foundation
public import HTTPTypes
import Crypto

/// What identifies a cached answer: the cache's namespace, the method, the URL with its query items sorted, and
/// a digest of the body when there is one. The request headers a response varies on (`Vary`) are checked
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
        self.init(method: request.method, normalizedURL: Self.normalize(request.url), bodyDigest: digest, namespace: namespace)
    }

    private init(method: HTTPRequest.Method, normalizedURL: String, bodyDigest: String?, namespace: String) {
        var text = "\(namespace) \(method.rawValue) \(normalizedURL)"
        if let bodyDigest { text += " body:\(bodyDigest)" }
        self.text = text
    }

    /// Creates a key from its text, as ``CacheEntry/key`` holds it.
    public init(text: String) {
        self.text = text
    }

    /// The same as ``text``.
    public var description: String { text }

    /// The SHA-256 of the text in lowercase hex: the disk store's file name for the entry.
    package var digest: String { Hex.string(SHA256.hash(data: Data(text.utf8))) }

    /// `url` with a lowercase scheme and host, no fragment, and its query items decoded, re-encoded one way and
    /// sorted by name then value, so `?b=2&a=1`, `?a=1&b=2` and `?a=%31&b=2` are the same key.
    static func normalize(_ url: URL) -> String {
        let text = url.absoluteString
        return isNormal(text) ? text : rebuilt(url)
    }

    /// `url` taken apart and put back together in the normal form.
    static func rebuilt(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        components.fragment = nil
        if let items = components.queryItems, !items.isEmpty {
            components.percentEncodedQuery = items.map { (FormEncoding.escape($0.name), FormEncoding.escape($0.value ?? "")) }
                .sorted { $0 < $1 }.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        } else {
            components.query = nil
        }
        return components.string ?? url.absoluteString
    }

    /// Whether `text`, an absolute URL's string, is already in the form ``normalize(_:)`` gives: lowercase scheme
    /// and authority, no query and no fragment. Most keys are, and taking such a URL apart and putting it back
    /// together with `URLComponents` cost more than the rest of a memory cache hit together.
    static func isNormal(_ text: String) -> Bool {
        var bytes = text.utf8.makeIterator()
        var slashesAfterScheme = -1  // counts the two slashes of "://", then the authority runs to the next slash
        while let byte = bytes.next() {
            switch byte {
            case UInt8(ascii: "?"), UInt8(ascii: "#"): return false
            case UInt8(ascii: "A")...UInt8(ascii: "Z") where slashesAfterScheme < 3: return false
            case UInt8(ascii: ":") where slashesAfterScheme < 0: slashesAfterScheme = 0
            case UInt8(ascii: "/") where slashesAfterScheme >= 0 && slashesAfterScheme < 3: slashesAfterScheme += 1
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
