public import Foundation

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
    private var cookies: [Cookie.Key: Cookie] = [:]
    private let file: URL?
    /// At most this many cookies are kept; the oldest go first.
    private let capacity: Int

    /// Creates a jar, reading `file` when it exists. A file that is not a cookie jar is an error, and the file
    /// is left as it is.
    public init(file: URL? = nil, capacity: Int = 3000) throws {
        self.file = file
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
        for cookie in stored where !cookie.isExpired(at: now) { cookies[cookie.key] = cookie }
    }

    /// Every cookie that has not expired, oldest first.
    public var all: [Cookie] {
        let now = Date()
        return cookies.values.filter { !$0.isExpired(at: now) }.sorted { $0.created < $1.created }
    }

    /// The cookies a request to `url` gets, longest path first, then oldest first (RFC 6265 §5.4), then by name.
    public func cookies(for url: URL) -> [Cookie] {
        let now = Date()
        return cookies.values.filter { !$0.isExpired(at: now) && $0.matches(url) }
            .sorted { ($1.path.count, $0.created, $0.name) < ($0.path.count, $1.created, $1.name) }
    }

    /// The `Cookie` header value for `url`, or `nil` when it gets none.
    public func headerValue(for url: URL) -> String? {
        let matching = cookies(for: url)
        return matching.isEmpty ? nil : matching.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// Cookies with `name`, on `domain` when given (a leading dot is ignored).
    public func cookies(named name: String, domain: String? = nil) -> [Cookie] {
        let domain = domain.map { Cookie(name: "", value: "", domain: $0).domain }
        return all.filter { $0.name == name && (domain == nil || $0.domain == domain) }
    }

    /// Stores `cookie`, replacing one with the same name, domain and path (whose creation time it keeps).
    /// Throws ``CourierError/Code/invalidParameter`` when the name or value could break a `Cookie` header.
    public func set(_ cookie: Cookie) throws {
        guard !cookie.name.isEmpty, CookieRules.isClean(cookie.name),
            CookieRules.isClean(cookie.value) || cookie.value.isEmpty,
            cookie.name.utf8.count + cookie.value.utf8.count <= CookieRules.maximumSize, !cookie.domain.isEmpty
        else {
            throw CourierError(
                code: .invalidParameter,
                message:
                    "cookie \"\(CourierError.printable(cookie.name))\" has an empty or unsafe name, value or domain"
            )
        }
        insert(cookie)
        try save()
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
        for cookie in accepted { insert(cookie) }
        if !accepted.isEmpty { try save() }
        return accepted.count
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

    /// Writes the jar to its file atomically (a reader sees the old jar or the new one, never half of either).
    private func save() throws {
        guard let file else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        do {
            try AtomicFile.write(try encoder.encode(all), to: file)
        } catch {
            throw CourierError(
                code: .fileAccess,
                message: "cannot save the cookie jar \"\(file.path(percentEncoded: false))\"",
                underlying: error
            )
        }
    }
}
