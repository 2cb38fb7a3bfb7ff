#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// Resolves a request's path against the bases, pure and separately tested.
///
/// Priority: an absolute URL in the path > the request's base URL > its service > the CDN URL when asked >
/// the session's base URL. ``Request/ignoresBaseURL`` skips every base.
package enum URLBuilder {
    /// The bases a request may name; all absent by default.
    package struct Bases {
        var requestBase: URL?
        var service: ServiceID?
        var usesCDN = false
        var ignoresBase = false
        var apiVersion: String?

        /// The bases; none by default, so the session's decide.
        package init(
            requestBase: URL? = nil,
            service: ServiceID? = nil,
            usesCDN: Bool = false,
            ignoresBase: Bool = false,
            apiVersion: String? = nil
        ) {
            self.requestBase = requestBase
            self.service = service
            self.usesCDN = usesCDN
            self.ignoresBase = ignoresBase
            self.apiVersion = apiVersion
        }
    }

    /// Whether `path` starts with a URL scheme and its colon (RFC 3986 §3.1: a letter, then letters, digits, `+`,
    /// `-` or `.`).
    private static func hasScheme(_ path: String) -> Bool {
        guard let colon = path.utf8.firstIndex(of: UInt8(ascii: ":")), colon != path.utf8.startIndex else {
            return false
        }
        let scheme = path.utf8[..<colon]
        guard let first = scheme.first, PercentEncoding.isAlphanumeric(first), first > UInt8(ascii: "9") else {
            return false
        }
        return scheme.allSatisfy { PercentEncoding.isAlphanumeric($0) || "+.-".utf8.contains($0) }
    }

    package static func resolve(path: String, bases: Bases, configuration: Configuration) throws -> URL {
        try validateCharacters(path)
        if let absolute = absoluteURL(path) { return absolute }
        if hasScheme(path) {
            throw CourierError.invalidURL(path)  // has a scheme, yet is not an absolute http(s) URL with a host
        }
        if bases.ignoresBase {
            throw CourierError.invalidURL(path, reason: "a request that ignores the base URL needs an absolute URL")
        }
        let base: URL
        if let requestBase = bases.requestBase {
            base = requestBase
        } else if let service = bases.service {
            guard let url = configuration.services[service] else {
                throw CourierError.invalidURL(
                    path,
                    reason: "no base URL is registered for service \"\(service)\", requested by"
                )
            }
            base = url
        } else if bases.usesCDN, let cdn = configuration.cdnURL {
            base = cdn
        } else if let global = configuration.baseURL {
            base = global
        } else {
            throw CourierError.invalidURL(path, reason: "a relative path needs a base URL")
        }
        guard absoluteURL(base.absoluteString) != nil else { throw CourierError.invalidURL(base.absoluteString) }
        return try join(base: base, version: bases.apiVersion ?? configuration.apiVersion, path: path)
    }

    /// `base` + `/version` + `/path`, with exactly one slash at each joint; the path's own query is kept.
    static func join(base: URL, version: String?, path: String) throws -> URL {
        var text = base.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        if let version, !version.isEmpty {
            text += "/" + version.trimming { $0 == "/" }
        }
        if !path.isEmpty { text += path.hasPrefix("/") ? path : "/" + path }
        guard let url = absoluteURL(text) else { throw CourierError.invalidURL(text) }
        return url
    }

    /// The URL when `string` is an absolute http(s) URL with a host and a port that can be connected to.
    package static func absoluteURL(_ string: String) -> URL? {
        guard let url = URL(string: string), isAbsoluteHTTP(url) else { return nil }
        return url
    }

    /// Whether `url` is an absolute http(s) URL with a host and a port that can be connected to.
    static func isAbsoluteHTTP(_ url: URL) -> Bool {
        guard let scheme = url.scheme, isHTTP(scheme: scheme), let host = url.host(), !host.isEmpty else {
            return false
        }
        return url.portProblem == nil
    }

    /// Throws ``CourierError/Code/invalidURL`` unless `url` is an absolute http(s) URL with a host and a port that
    /// can be connected to: what every URL Courier is handed, and every redirect target, must pass before a
    /// dependency sees it.
    package static func validate(_ url: URL) throws {
        if let problem = url.portProblem { throw CourierError.invalidURL(url.absoluteString, reason: problem) }
        guard isAbsoluteHTTP(url) else { throw CourierError.invalidURL(url.absoluteString) }
    }

    /// Whether `scheme` is `http` or `https`, in any case; the usual spellings are matched without lowercasing.
    private static func isHTTP(scheme: String) -> Bool {
        switch scheme {
        case "http", "https": true
        default: ["http", "https"].contains(scheme.lowercased())
        }
    }

    /// Rejects spaces and control characters: a URL holding them is malformed, not something to "fix". Scanned as
    /// UTF-8: those characters are single bytes there, and no byte of a longer character is below 0x80.
    package static func validateCharacters(_ string: String) throws {
        if string.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw CourierError.invalidURL(string, reason: "URL contains a space or control character")
        }
    }

    /// `text` with what a URL may not hold raw percent-encoded (non-ASCII, spaces, `"<>\^`{|}`, a `%` that starts
    /// no escape) and everything else, escapes included, left as it is: what a server's `Location` needs before it
    /// is parsed, since Foundation encodes every `%` again once it has anything to encode (`/é%41` became
    /// `/%C3%A9%2541`).
    package static func encodingOnlyWhatNeedsIt(_ text: String) -> String {
        let bytes = Array(text.utf8)
        guard bytes.contains(where: { !isURLByte($0) || $0 == UInt8(ascii: "%") }) else { return text }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        for (index, byte) in bytes.enumerated() {
            let startsEscape =
                byte == UInt8(ascii: "%") && index + 2 < bytes.count && isHex(bytes[index + 1])
                && isHex(bytes[index + 2])
            if isURLByte(byte) && (byte != UInt8(ascii: "%") || startsEscape) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// RFC 3986's unreserved and reserved characters, and `%`.
    private static func isURLByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default: return "-._~:/?#[]@!$&'()*+,;=%".utf8.contains(byte)
        }
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    /// `url` with `parameters` appended to its query; with `overwrite` false an existing name is kept.
    package static func appending(_ parameters: Parameters, to url: URL, overwrite: Bool = true) -> URL {
        guard !parameters.isEmpty, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return url
        }
        var added = parameters
        if !overwrite, let existing = components.percentEncodedQueryItems {
            for item in existing { added[PercentEncoding.decode(item.name) ?? item.name] = nil }
        }
        let encoded = FormEncoding.encode(added)
        guard !encoded.isEmpty else { return url }
        let current = components.percentEncodedQuery ?? ""
        components.percentEncodedQuery = current.isEmpty ? encoded : current + "&" + encoded
        return components.url ?? url
    }
}
