#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Cookies for a session (RBEFireworks' cookie API): filled from `Set-Cookie` and sent in `Cookie` headers
/// automatically when set as ``Configuration/cookieJar``, and persisted to a file atomically if given one.
///
/// ```swift
/// let jar = try CookieJar(file: URL(filePath: "cookies.json"))
/// let session = Session(configuration: Configuration { $0.cookieJar = jar })
/// try await jar.set(Cookie(name: "lang", value: "en", domain: "example.com", hostOnly: false))
/// let all = await jar.cookies(named: "session", domain: "api.example.com")
/// ```
///
/// Expired cookies are dropped when read or saved. Session cookies (no expiry) are saved too, as curl's
/// cookie jar does, so a later process can carry on with them.
public actor CookieJar {
    /// How a jar's file is written.
    public enum FileFormat: Sendable {
        /// Courier's own: a JSON array of ``Cookie``s, which keeps every attribute.
        case json
        /// curl's cookie file (``NetscapeCookieFile``), which curl, wget and other tools read and write.
        case netscape
    }

    private var cookies: [Cookie.Key: Cookie] = [:]
    /// The creation time of the newest cookie: each new one is created after it, so cookies set by one response
    /// are ordered as the response listed them (RFC 6265 §5.4 step 2) and no two ever tie.
    private var latestCreation = Date.distantPast
    private let file: URL?
    private let format: FileFormat
    /// At most this many cookies are kept; the oldest go first.
    private let capacity: Int

    /// Creates a jar, reading `file` when it exists. A file that is not a cookie jar is an error, and the file
    /// is left as it is.
    public init(file: URL? = nil, capacity: Int = 3000) throws {
        self.file = file
        format = .json
        self.capacity = max(1, capacity)
        guard let file, FileManager.default.fileExists(atPath: file.path(percentEncoded: false)) else { return }
        let stored: [Cookie]
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            stored = try decoder.decode([Cookie].self, from: Data(contentsOf: file))
        } catch {
            throw CourierError(
                code: .decoding,
                message: "\"\(file.path(percentEncoded: false))\" is not a Courier cookie jar",
                underlying: error
            )
        }
        let now = Date()
        for cookie in stored where !cookie.isExpired(at: now) {
            cookies[cookie.key] = cookie
            latestCreation = max(latestCreation, cookie.created)
        }
    }

    /// Creates a jar holding `cookies` (those that are unsafe or expired are left out) that saves itself to `file`
    /// in `format` on every change, and at once when it starts with a cookie: curl's `-b FILE -c FILE`, where
    /// the cookies come from one file and go to another.
    public init(cookies: [Cookie], savingTo file: URL?, format: FileFormat, capacity: Int = 3000) throws {
        self.file = file
        self.format = format
        self.capacity = max(1, capacity)
        let now = Date()
        var kept: [Cookie.Key: Cookie] = [:]
        for cookie in cookies where Self.isStorable(cookie) && !cookie.isExpired(at: now) {
            kept[cookie.key] = cookie
            latestCreation = max(latestCreation, cookie.created)
        }
        self.cookies = kept
        if let file, !kept.isEmpty {
            try Self.write(kept.values.sorted(by: Self.olderFirst), to: file, format: format)
        }
    }

    /// Every cookie that has not expired, oldest first.
    public var all: [Cookie] {
        let now = Date()
        return cookies.values.filter { !$0.isExpired(at: now) }.sorted(by: Self.olderFirst)
    }

    /// The cookies a request to `url` gets in RFC 6265 §5.4's order: longer paths first, then earlier creation.
    public func cookies(for url: URL) -> [Cookie] {
        let now = Date()
        return cookies.values.filter { !$0.isExpired(at: now) && $0.matches(url) }
            .sorted { first, second in
                let (one, two) = (first.path.utf8.count, second.path.utf8.count)
                return one != two ? one > two : Self.olderFirst(first, second)
            }
    }

    /// The `Cookie` header value for `url`, or `nil` when it gets none: `name=value` pairs joined by `; `, and a
    /// nameless cookie as its value alone (6265bis §5.8.3).
    public func headerValue(for url: URL) -> String? {
        let matching = cookies(for: url)
        return matching.isEmpty ? nil : matching.map(\.pair).joined(separator: "; ")
    }

    /// Earlier creation first; cookies given the same time through ``set(_:)`` fall back to their identity, so
    /// the order never depends on a dictionary's.
    private static func olderFirst(_ first: Cookie, _ second: Cookie) -> Bool {
        if first.created != second.created { return first.created < second.created }
        return (first.name, first.domain, first.path) < (second.name, second.domain, second.path)
    }

    /// Cookies with `name`, on `domain` when given (a leading dot is ignored).
    public func cookies(named name: String, domain: String? = nil) -> [Cookie] {
        let domain = domain.map { Cookie(name: "", value: "", domain: $0).domain }
        return all.filter { $0.name == name && (domain == nil || $0.domain == domain) }
    }

    /// Stores `cookie`, replacing one with the same name, domain and path (whose creation time it keeps).
    /// Throws ``CourierError/Code/invalidParameter`` when the name or value could break a `Cookie` header (a
    /// control character, a `;`, an `=` in the name) or both are empty.
    public func set(_ cookie: Cookie) throws {
        guard Self.isStorable(cookie) else {
            throw CourierError(
                code: .invalidParameter,
                message:
                    "cookie \"\(CourierError.printable(cookie.name))\" has an empty or unsafe name, value or domain"
            )
        }
        latestCreation = max(latestCreation, cookie.created)
        insert(cookie)
        try save()
    }

    /// Whether `cookie` cannot break a `Cookie` header: clean name and value, no `=` in the name, not both empty,
    /// within the size limit, with a domain.
    private static func isStorable(_ cookie: Cookie) -> Bool {
        !(cookie.name.isEmpty && cookie.value.isEmpty) && CookieRules.isClean(cookie.name)
            && !cookie.name.contains("=") && CookieRules.isClean(cookie.value)
            && cookie.name.utf8.count + cookie.value.utf8.count <= CookieRules.maximumSize && !cookie.domain.isEmpty
    }

    /// Deletes cookies with `name`, on `domain` when given; returns how many went.
    @discardableResult
    public func delete(named name: String, domain: String? = nil) throws -> Int {
        let doomed = cookies(named: name, domain: domain)
        for cookie in doomed { cookies[cookie.key] = nil }
        if !doomed.isEmpty { try save() }
        return doomed.count
    }

    /// Deletes every cookie.
    public func deleteAll() throws {
        cookies = [:]
        try save()
    }

    /// Stores what the `Set-Cookie` headers of a response from `url` set; returns how many were accepted.
    /// A cookie with a past expiry deletes the one it names.
    @discardableResult
    public func store(setCookieHeaders headers: [String], from url: URL) throws -> Int {
        let now = Date()
        let accepted = headers.compactMap { CookieRules.parse(setCookie: $0, from: url, now: now) }
        for var cookie in accepted {
            cookie.created = nextCreation(after: now)
            insert(cookie)
        }
        if !accepted.isEmpty { try save() }
        return accepted.count
    }

    /// `now`, or just after the newest cookie's creation when that is not earlier: a microsecond, which a `Date`
    /// of this century still tells apart.
    private func nextCreation(after now: Date) -> Date {
        latestCreation = max(now, latestCreation.addingTimeInterval(0.000_001))
        return latestCreation
    }

    private func insert(_ cookie: Cookie) {
        var cookie = cookie
        if let existing = cookies[cookie.key] { cookie.created = existing.created }
        if cookie.isExpired() {
            cookies[cookie.key] = nil
            return
        }
        cookies[cookie.key] = cookie
        if cookies.count > capacity, let oldest = cookies.values.min(by: { $0.created < $1.created }) {
            cookies[oldest.key] = nil
        }
    }

    /// Writes the jar to its file atomically (a reader sees the old jar or the new one, never half of either),
    /// through a symbolic link, and straight into a path that names no regular file (`/dev/null`).
    private func save() throws {
        guard let file else { return }
        try Self.write(all, to: file, format: format)
    }

    /// Writes `cookies` to `file` in `format`, atomically.
    private static func write(_ cookies: [Cookie], to file: URL, format: FileFormat) throws {
        do {
            switch format {
            case .json:
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                encoder.dateEncodingStrategy = .secondsSince1970
                try AtomicFile.write(try encoder.encode(cookies), to: file, userNamed: true)
            case .netscape:
                try AtomicFile.write(Data(NetscapeCookieFile.text(of: cookies).utf8), to: file, userNamed: true)
            }
        } catch {
            throw CourierError(
                code: .fileAccess,
                message: "cannot save the cookie jar \"\(file.path(percentEncoded: false))\"",
                underlying: error
            )
        }
    }
}
