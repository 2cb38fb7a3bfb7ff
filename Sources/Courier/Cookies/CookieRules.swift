#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// RFC 6265's rules, as pure functions that follow its algorithms step by step (with 6265bis where it settles
/// what 6265 left open): parsing `Set-Cookie` (§5.2), the storage model (§5.3), domain and path matching (§5.1.3,
/// §5.1.4). The cookie-date algorithm (§5.1.1) is ``HTTPDate/parseCookieDate(_:)``.
enum CookieRules {
    /// The largest name plus value a cookie may have (6265bis §5.6 step 5), as browsers allow.
    static let maximumSize = 4096
    /// The largest attribute value; a longer one is ignored (6265bis §5.6.1).
    static let maximumAttributeSize = 1024
    /// The longest lifetime a cookie gets, whatever its `Expires` or `Max-Age` asks (6265bis §5.6.1, §5.6.2).
    static let maximumAge: TimeInterval = 400 * 86_400

    /// One attribute of a `Set-Cookie` value, as §5.2 leaves it for the storage model.
    enum Attribute: Equatable {
        case expires(Date)
        case maxAge(Int)
        case domain(String)
        case path(String)
        case secure
        case httpOnly
        case sameSite(Cookie.SameSite)
    }

    /// What §5.2 makes of a `Set-Cookie` value: the name, the value and the attribute list in order.
    struct Parsed: Equatable {
        var name: String
        var value: String
        var attributes: [Attribute]
    }

    /// The cookie a `Set-Cookie` value sets for a response from `url`, or `nil` when RFC 6265 says to ignore it.
    static func parse(setCookie header: String, from url: URL, now: Date = Date()) -> Cookie? {
        guard let host = url.host(percentEncoded: false)?.lowercased(), !host.isEmpty,
            let parsed = parse(setCookie: header, defaultPath: defaultPath(of: url), now: now)
        else { return nil }
        return store(parsed, host: host, defaultPath: defaultPath(of: url), isSecure: url.isHTTPS, now: now)
    }

    /// §5.2: the name, value and attributes of a `Set-Cookie` value; `nil` when the whole value is to be ignored.
    ///
    /// 1. A control character other than HTAB anywhere ignores it (6265bis step 1).
    /// 2. The name-value pair runs to the first `;`, the attributes follow.
    /// 3. The pair splits at its first `=`; with none, the name is empty and the pair is the value (6265bis).
    /// 4. Whitespace (space and HTAB) is trimmed from both ends of each; whatever else they hold is kept.
    /// 5. Both empty, or together more than 4 KiB, ignores it.
    static func parse(setCookie header: String, defaultPath: String, now: Date) -> Parsed? {
        let bytes = Array(header.utf8)
        guard !bytes.contains(where: isControl) else { return nil }
        let pairEnd = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        let pair = bytes[..<pairEnd]
        let name: ArraySlice<UInt8>
        let value: ArraySlice<UInt8>
        if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
            name = trimmed(pair[..<equals])
            value = trimmed(pair[(equals + 1)...])
        } else {
            name = []
            value = trimmed(pair)
        }
        guard !(name.isEmpty && value.isEmpty), name.count + value.count <= maximumSize else { return nil }
        var attributes: [Attribute] = []
        var rest = bytes[pairEnd...]
        while let semicolon = rest.first, semicolon == UInt8(ascii: ";") {
            rest = rest.dropFirst()
            let end = rest.firstIndex(of: UInt8(ascii: ";")) ?? rest.endIndex
            if let attribute = attribute(rest[..<end], defaultPath: defaultPath, now: now) {
                attributes.append(attribute)
            }
            rest = rest[end...]
        }
        return Parsed(name: string(name), value: string(value), attributes: attributes)
    }

    /// §5.2.1–§5.2.6: one cookie-av, or `nil` when it is ignored (unknown, empty where a value is needed, a date
    /// that is no cookie-date, a `Max-Age` that is not an integer, a value over 1 KiB).
    static func attribute(_ text: ArraySlice<UInt8>, defaultPath: String, now: Date) -> Attribute? {
        let equals = text.firstIndex(of: UInt8(ascii: "="))
        let name = string(trimmed(text[..<(equals ?? text.endIndex)])).lowercased()
        let value = equals.map { trimmed(text[($0 + 1)...]) } ?? []
        guard value.count <= maximumAttributeSize else { return nil }
        switch name {
        case "expires":
            return HTTPDate.parseCookieDate(string(value)).map(Attribute.expires)
        case "max-age":
            // §5.2.2: a DIGIT or "-" first, DIGITs after; a number past Int's range is as far as it goes.
            let isNegative = value.first == UInt8(ascii: "-")
            let digits = isNegative ? value.dropFirst() : value
            guard !digits.isEmpty, digits.allSatisfy(isDigit) else { return nil }
            let seconds = Int(string(digits.prefix(18))) ?? 0  // 18 digits are far past the 400-day cap
            return .maxAge(isNegative ? -seconds : seconds)
        case "domain":
            // §5.2.3: an empty value is ignored; one leading dot goes; the rest is lowercased.
            guard !value.isEmpty else { return nil }
            let domain = value.first == UInt8(ascii: ".") ? value.dropFirst() : value
            return .domain(string(domain).lowercased())
        case "path":
            // §5.2.4: an empty value, or one not starting with "/", means the default path.
            guard value.first == UInt8(ascii: "/") else { return .path(defaultPath) }
            return .path(string(value))
        case "secure": return .secure
        case "httponly": return .httpOnly
        case "samesite":
            return Cookie.SameSite.allCases.first { $0.rawValue.lowercased() == string(value).lowercased() }
                .map(Attribute.sameSite)
        default: return nil
        }
    }

    /// §5.3, the storage model: the cookie `parsed` makes for a response from `host`, or `nil` when it is ignored.
    ///
    /// - Step 3: the last `Max-Age` sets the expiry, else the last `Expires`; either is capped at 400 days.
    /// - Step 4: the last `Domain` attribute is the cookie's domain attribute.
    /// - Step 5: a public suffix as the domain attribute is dropped when it is the host itself, and ignores the
    ///   cookie otherwise.
    /// - Step 6: a domain attribute the host does not domain-match ignores the cookie; with one the cookie is a
    ///   domain cookie, without one a host-only cookie of the host.
    /// - Step 7: the last `Path` attribute, else the default path.
    /// - Step 8: a `Secure` cookie from a response that was not over HTTPS is ignored.
    /// - 6265bis: a nameless cookie whose value looks like a prefixed name, and a `__Secure-` or `__Host-` cookie
    ///   that breaks its prefix's rules, are ignored.
    static func store(_ parsed: Parsed, host: String, defaultPath: String, isSecure: Bool, now: Date) -> Cookie? {
        var cookie = Cookie(name: parsed.name, value: parsed.value, domain: host, path: defaultPath, created: now)
        var maxAge: Int?
        var expires: Date?
        var domainAttribute = ""
        for attribute in parsed.attributes {
            switch attribute {
            case .expires(let date): expires = date
            case .maxAge(let seconds): maxAge = seconds
            case .domain(let domain): domainAttribute = domain
            case .path(let path): cookie.path = path
            case .secure: cookie.secure = true
            case .httpOnly: cookie.httpOnly = true
            case .sameSite(let sameSite): cookie.sameSite = sameSite
            }
        }
        if let maxAge {
            cookie.expires = maxAge <= 0 ? Date.distantPast : now.addingTimeInterval(min(Double(maxAge), maximumAge))
        } else if let expires {
            cookie.expires = min(expires, now.addingTimeInterval(maximumAge))
        }
        if !domainAttribute.isEmpty, !host.isIPAddress, PublicSuffixList.shared.isPublicSuffix(domainAttribute) {
            guard domainAttribute == host else { return nil }
            domainAttribute = ""
        }
        if !domainAttribute.isEmpty {
            guard domainMatches(host: host, domain: domainAttribute) else { return nil }
            cookie.domain = domainAttribute
            cookie.hostOnly = false
        }
        if cookie.secure && !isSecure { return nil }
        guard respectsPrefixes(cookie) else { return nil }
        return cookie
    }

    /// 6265bis §4.1.3: `__Secure-` needs `Secure`; `__Host-` needs `Secure`, no `Domain` and the path `/`; and a
    /// nameless cookie may not pass for either.
    static func respectsPrefixes(_ cookie: Cookie) -> Bool {
        func starts(_ text: String, with prefix: String) -> Bool { text.lowercased().hasPrefix(prefix) }
        if cookie.name.isEmpty {
            return !starts(cookie.value, with: "__secure-") && !starts(cookie.value, with: "__host-")
        }
        if starts(cookie.name, with: "__secure-") && !cookie.secure { return false }
        if starts(cookie.name, with: "__host-") && !(cookie.secure && cookie.hostOnly && cookie.path == "/") {
            return false
        }
        return true
    }

    /// §5.1.3: the host is the domain, or ends with `.domain` and is not an IP address.
    static func domainMatches(host: String, domain: String) -> Bool {
        host == domain || (host.hasSuffix("." + domain) && !host.isIPAddress)
    }

    /// §5.1.4: the paths are identical, or the cookie's is a prefix of the request's and either ends with `/` or
    /// is followed by a `/` in the request's. Compared byte by byte, with the request's path as it goes on the wire
    /// (percent-encoded) and the cookie's encoded the same way, so `Path=/ü` matches a request for `/ü`.
    static func pathMatches(requestPath: String, cookiePath: String) -> Bool {
        let request = Array((requestPath.isEmpty ? "/" : requestPath).utf8)
        let cookie = Array(encodedPath(cookiePath).utf8)
        guard request.starts(with: cookie) else { return false }
        return request.count == cookie.count || cookie.last == UInt8(ascii: "/")
            || request[cookie.count] == UInt8(ascii: "/")
    }

    /// A cookie path in the form a request path takes on the wire: what a URL path may not hold raw (non-ASCII,
    /// spaces) percent-encoded, and `%XX` already there left alone.
    static func encodedPath(_ path: String) -> String {
        guard path.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) else { return path }
        return PercentEncoding.encode(path) { PercentEncoding.isPathAllowed($0) || $0 == UInt8(ascii: "%") }
    }

    /// §5.1.4's default path: the request path up to its last `/`, or `/`.
    static func defaultPath(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// Whether a name or value can go into a `Cookie` header as it is: no control character other than HTAB, and
    /// no `;` (which would end it early). Space, commas and non-ASCII are kept, as §5.2 keeps them.
    static func isClean(_ text: String) -> Bool {
        !text.utf8.contains { isControl($0) || $0 == UInt8(ascii: ";") }
    }

    /// 6265bis's CTLs other than HTAB: `%x00-08 / %x0A-1F / %x7F`.
    static func isControl(_ byte: UInt8) -> Bool { (byte < 0x20 && byte != 0x09) || byte == 0x7F }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Without leading and trailing whitespace (space and HTAB, RFC 6265's WSP).
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return [] }
        return bytes[first...last]
    }

    private static func string(_ bytes: some Collection<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }
}
