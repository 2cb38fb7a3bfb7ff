import Foundation

/// RFC 6265's rules, as pure functions: parsing `Set-Cookie`, domain and path matching, and what a cookie may hold.
enum CookieRules {
    /// The largest name plus value a cookie may have, as browsers allow.
    static let maximumSize = 4096

    /// The cookie a `Set-Cookie` value sets for a response from `url`, or `nil` when RFC 6265 says to ignore it:
    /// no `name=`, a `Domain` the host is not inside or that is a public suffix (``PublicSuffixList``), a `Secure`
    /// cookie over plain HTTP, or more than 4 KiB.
    static func parse(setCookie header: String, from url: URL, now: Date = Date()) -> Cookie? {
        guard let host = url.host(percentEncoded: false)?.lowercased(), !host.isEmpty else { return nil }
        var parts = header.split(separator: ";", omittingEmptySubsequences: false).makeIterator()
        guard let pair = parts.next(), let equals = pair.firstIndex(of: "=") else { return nil }
        let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
        let value = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.utf8.count + value.utf8.count <= maximumSize, isClean(name), isClean(value) else {
            return nil
        }

        var cookie = Cookie(
            name: name,
            value: value,
            domain: host,
            hostOnly: true,
            path: defaultPath(of: url),
            created: now
        )
        var maxAge: Int?
        for attribute in parts {
            let (key, argument) =
                attribute.firstIndex(of: "=").map {
                    (
                        attribute[..<$0].trimmingCharacters(in: .whitespaces).lowercased(),
                        attribute[attribute.index(after: $0)...].trimmingCharacters(in: .whitespaces)
                    )
                } ?? (attribute.trimmingCharacters(in: .whitespaces).lowercased(), "")
            switch key {
            case "expires": if let date = HTTPDate.parseCookieDate(argument) { cookie.expires = date }
            case "max-age": if let seconds = Int(argument) { maxAge = seconds }
            case "domain":
                let domain = (argument.hasPrefix(".") ? String(argument.dropFirst()) : argument).lowercased()
                guard !domain.isEmpty else { continue }
                guard domainMatches(host: host, domain: domain), domain.contains(".") || domain == host else {
                    return nil
                }
                // RFC 6265 §5.3 step 5: a public suffix is no cookie domain; only its own host keeps the cookie, as host-only.
                if !host.isIPAddress, PublicSuffixList.shared.isPublicSuffix(domain) {
                    guard domain == host else { return nil }
                    continue
                }
                cookie.domain = domain
                cookie.hostOnly = false
            case "path": cookie.path = argument.hasPrefix("/") ? argument : defaultPath(of: url)
            case "secure": cookie.secure = true
            case "httponly": cookie.httpOnly = true
            case "samesite":
                cookie.sameSite = Cookie.SameSite.allCases.first { $0.rawValue.lowercased() == argument.lowercased() }
            default: continue
            }
        }
        if let maxAge {  // Max-Age wins over Expires
            cookie.expires =
                maxAge <= 0 ? Date.distantPast : now.addingTimeInterval(TimeInterval(min(maxAge, 400 * 86_400)))
        }
        if cookie.secure && !url.isHTTPS { return nil }
        return cookie
    }

    /// RFC 6265 §5.1.3: the host is the domain, or ends with `.domain` and is not an IP address.
    static func domainMatches(host: String, domain: String) -> Bool {
        host == domain || (host.hasSuffix("." + domain) && !host.isIPAddress)
    }

    /// RFC 6265 §5.1.4: the paths are equal, or the cookie's is a prefix ending at a `/` boundary.
    static func pathMatches(requestPath: String, cookiePath: String) -> Bool {
        let requestPath = requestPath.isEmpty ? "/" : requestPath
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return requestPath.count == cookiePath.count || cookiePath.hasSuffix("/")
            || requestPath[requestPath.index(requestPath.startIndex, offsetBy: cookiePath.count)] == "/"
    }

    /// RFC 6265 §5.1.4's default path: the request path up to its last `/`, or `/`.
    static func defaultPath(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// Whether a name or value can go into a `Cookie` header without breaking it: no control characters, `;`,
    /// or (for safety with servers that split on them) `,` and whitespace inside.
    static func isClean(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != ";" && $0 != "," }
    }
}
