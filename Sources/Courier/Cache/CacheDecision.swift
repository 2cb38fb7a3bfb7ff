import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Every cache decision for one request under one policy, without I/O: what to do before the network, what to
/// store after it, how a 304 updates an entry, and when a failure may be answered from the cache. The executor
/// performs the actions; tests drive this event by event.
struct CacheDecision {
    /// What to do before asking the network.
    enum Lookup: Equatable {
        /// Answer with the entry; it is fresh enough for the policy.
        case serve(CacheEntry, age: Duration)
        /// Answer with the stale entry and refresh it in the background (`stale-while-revalidate`).
        case serveStale(CacheEntry, age: Duration)
        /// Ask the network: conditionally when `revalidating` is set; `fallback` may answer if the network fails.
        case fetch(revalidating: CacheEntry?, fallback: CacheEntry?)
        /// Nothing usable and the policy forbids the network.
        case miss
    }

    let policy: CachePolicy
    let options: CacheOptions
    let request: PreparedRequest
    /// The one byte range the request asks for, when the cache answers it (see ``PartialContent``): a GET with
    /// one `Range` of one byte range, under ``CachePolicy/http``. Read once, as the decision is made.
    let range: PartialContent.Spec?

    init(policy: CachePolicy, options: CacheOptions, request: PreparedRequest) {
        self.policy = policy
        self.options = options
        self.request = request
        let answersRange = policy == .http && request.method == .get && request.headers[values: .range].count == 1
        range = answersRange ? request.headers[.range].flatMap(PartialContent.spec) : nil
    }

    private var freshness: HTTPFreshness { HTTPFreshness(options: options) }

    // MARK: Before the network

    func lookup(_ stored: CacheEntry?, now: Date) -> Lookup {
        // A stored part answers only a request for a range; a range is answered from a fresh entry that holds all
        // of it, or asked of the server as it is (no conditional request, no stale answer), so a part never
        // stands in for what the server would send.
        let entry = stored.flatMap { matchesVary($0) && ($0.status != 206 || range != nil) ? $0 : nil }
        if let range {
            switch httpLookup(entry, now: now) {
            case .serve(let entry, let age) where PartialContent.holds(range, entry): return .serve(entry, age: age)
            case .miss: return .miss
            default: return .fetch(revalidating: nil, fallback: nil)
            }
        }
        switch policy {
        case .networkOnly:
            return .fetch(revalidating: nil, fallback: nil)
        case .cacheOnly:
            guard let entry else { return .miss }
            return .serve(entry, age: entry.age(at: now))
        case .cacheElseNetwork(let ttl):
            guard let entry else { return .fetch(revalidating: nil, fallback: nil) }
            if Duration.seconds(now.timeIntervalSince(entry.storedAt)) < ttl {
                return .serve(entry, age: entry.age(at: now))
            }
            return .fetch(revalidating: hasValidators(entry) ? entry : nil, fallback: nil)
        case .networkElseCache:
            return .fetch(revalidating: nil, fallback: entry)
        case .cacheThenNetwork:
            return .fetch(revalidating: nil, fallback: nil)
        case .http:
            return httpLookup(entry, now: now)
        }
    }

    private func httpLookup(_ entry: CacheEntry?, now: Date) -> Lookup {
        let asked = CacheControl(request.headers)
        guard let entry, !asked.noStore else {
            return asked.onlyIfCached ? .miss : .fetch(revalidating: nil, fallback: nil)
        }
        let answered = CacheControl(entry.headers)
        let age = entry.age(at: now)
        let lifetime = freshness.lifetime(
            status: entry.status,
            headers: entry.headers,
            control: answered,
            receivedAt: entry.storedAt
        )
        let mayServeWithoutAsking = !asked.noCache && !answered.noCache
        var fresh = age < lifetime
        if let maxAge = asked.maxAge, age > .seconds(maxAge) { fresh = false }
        if let minFresh = asked.minFresh, lifetime - age < .seconds(minFresh) { fresh = false }
        if mayServeWithoutAsking && fresh { return .serve(entry, age: age) }

        let staleness = age - lifetime
        let mayServeStale =
            mayServeWithoutAsking && !answered.mustRevalidate && (!options.isShared || !answered.proxyRevalidate)
        if mayServeStale, let maxStale = asked.maxStale, staleness <= .seconds(maxStale) {
            return .serve(entry, age: age)
        }
        if asked.onlyIfCached { return mayServeStale ? .serve(entry, age: age) : .miss }
        if mayServeStale, let window = answered.staleWhileRevalidate, staleness <= .seconds(window) {
            return .serveStale(entry, age: age)
        }
        return .fetch(revalidating: hasValidators(entry) ? entry : nil, fallback: entry)
    }

    private func hasValidators(_ entry: CacheEntry) -> Bool {
        entry.etag != nil || entry.lastModified != nil
    }

    /// The headers that make a request conditional on `entry` (RFC 9110 §13.1).
    func conditionalHeaders(for entry: CacheEntry) -> HTTPFields {
        var fields = HTTPFields()
        if let etag = entry.etag { fields[.ifNoneMatch] = etag }
        if let modified = entry.lastModified { fields[.ifModifiedSince] = modified }
        return fields
    }

    // MARK: After the network

    /// The entry to store for `body`, or `nil` when the policy or the response forbids storing it.
    func entryToStore(_ body: ResponseBody, key: CacheKey, requestTime: Date, responseTime: Date) -> CacheEntry? {
        let status = body.status.code
        let answered = CacheControl(body.headers)
        // §5.2.2.3: `must-understand` stores a status this cache knows despite `no-store`, and nothing it does not.
        let refusedByResponse =
            answered.mustUnderstand && policy == .http ? !HTTPFreshness.understood.contains(status) : answered.noStore
        let storablePart =
            range != nil && PartialContent.isStorable(status: status, headers: body.headers, bodyCount: body.data.count)
        guard policy.usesCache, status != 206 || storablePart, !refusedByResponse,
            !CacheControl(request.headers).noStore,
            options.excludes?(request, body) != true, let varying = varyingRequestHeaders(for: body.headers)
        else { return nil }
        if policy != .http {
            guard (200..<300).contains(status) else { return nil }  // time-to-live policies keep successes only
            // An answer to one caller's credentials is stored only when asked for, and then keyed by them.
            if CacheKey.hasCredentials(request.headers), !options.storesAuthorizedResponses { return nil }
        }
        if policy == .http {
            guard request.method == .get else { return nil }
            if request.headers[.authorization] != nil, !options.storesAuthorizedResponses,
                !(answered.isPublic || answered.mustRevalidate || answered.sharedMaxAge != nil)
            {
                return nil
            }
            if options.isShared, answered.isPrivate { return nil }
            let storable =
                freshness.hasExplicitLifetime(body.headers, control: answered) || answered.isPublic
                || answered.isPrivate
                || HTTPFreshness.heuristicallyCacheable.contains(status)
            guard storable else { return nil }
        }
        var entry = CacheEntry(
            key: key.text,
            method: request.method.rawValue,
            url: CacheKey.normalize(request.url),
            status: status,
            headers: Self.storable(body.headers),
            varyingRequestHeaders: varying,
            storedAt: responseTime,
            body: body.data
        )
        refreshTimes(of: &entry, headers: body.headers, requestTime: requestTime, responseTime: responseTime)
        return entry
    }

    /// `entry` after a 304: the 304's headers replace the stored ones of the same names, and its age restarts
    /// (RFC 9111 §4.3.4).
    func revalidated(
        _ entry: CacheEntry,
        notModified headers: HTTPFields,
        requestTime: Date,
        responseTime: Date
    ) -> CacheEntry {
        var updated = entry
        // §3.2: the stored fields are updated from the 304's, except framing and the connection's own.
        let skipped: Set<HTTPField.Name> = [.contentLength, .contentEncoding, .transferEncoding, .contentRange]
        for name in Set(Self.storable(headers).map(\.name)) where !skipped.contains(name) {
            updated.headers[values: name] = headers[values: name]
        }
        updated.storedAt = responseTime
        refreshTimes(of: &updated, headers: updated.headers, requestTime: requestTime, responseTime: responseTime)
        return updated
    }

    private func refreshTimes(of entry: inout CacheEntry, headers: HTTPFields, requestTime: Date, responseTime: Date) {
        entry.initialAge = HTTPFreshness.initialAge(
            headers: headers,
            requestTime: requestTime,
            responseTime: responseTime
        )
        switch policy {
        case .cacheElseNetwork(let ttl):
            entry.expiresAt = responseTime.addingTimeInterval(ttl.seconds)
        default:
            let control = CacheControl(headers)
            let lifetime = freshness.lifetime(
                status: entry.status,
                headers: headers,
                control: control,
                receivedAt: responseTime
            )
            entry.expiresAt =
                lifetime > .zero || freshness.hasExplicitLifetime(headers, control: control)
                ? responseTime.addingTimeInterval((lifetime - entry.initialAge).seconds) : nil
        }
    }

    /// `headers` less what belongs to one connection (RFC 9111 §3.1): the hop-by-hop fields (`Connection`,
    /// `Keep-Alive`, `TE`, `Transfer-Encoding`, `Upgrade`, every `Proxy-*`) and every field `Connection` names.
    static func storable(_ headers: HTTPFields) -> HTTPFields {
        let named = Set(
            headers[values: .connection].flatMap { $0.split(separator: ",") }
                .map { $0.trimmingSpaces().lowercased() }
        )
        guard named.isEmpty == false || headers.contains(where: { isHopByHop($0.name) }) else { return headers }
        return HTTPFields(headers.filter { !isHopByHop($0.name) && !named.contains($0.name.canonicalName) })
    }

    private static func isHopByHop(_ name: HTTPField.Name) -> Bool {
        switch name.canonicalName {
        case "connection", "keep-alive", "te", "transfer-encoding", "upgrade": true
        default: name.canonicalName.hasPrefix("proxy-")
        }
    }

    // MARK: After a failure

    /// The entry that may answer instead of `error`, with its age: any entry under ``CachePolicy/networkElseCache``,
    /// one within its `stale-if-error` window under ``CachePolicy/http``.
    func fallback(after error: CourierError, entry: CacheEntry?, now: Date) -> (CacheEntry, Duration)? {
        guard let entry, Self.isNetworkFailure(error) else { return nil }
        let age = entry.age(at: now)
        switch policy {
        case .networkElseCache:
            return (entry, age)
        case .http:
            let answered = CacheControl(entry.headers)
            guard !answered.mustRevalidate,
                let window = answered.staleIfError ?? CacheControl(request.headers).staleIfError
            else { return nil }
            let lifetime = freshness.lifetime(
                status: entry.status,
                headers: entry.headers,
                control: answered,
                receivedAt: entry.storedAt
            )
            return age - lifetime <= .seconds(window) ? (entry, age) : nil
        default:
            return nil
        }
    }

    /// Failures of the network or the server, as opposed to the request or its cancellation: a timeout, a
    /// connection that failed or broke, bytes that are not HTTP, or a 500, 502, 503 or 504.
    static func isNetworkFailure(_ error: CourierError) -> Bool {
        switch error.code {
        case .timeout, .connectionFailed, .connectionClosed, .connectionReset, .tls, .invalidResponse, .offline,
            .transport:
            return true
        case .httpStatus:
            return [500, 502, 503, 504].contains(error.status?.code ?? 0)
        default:
            return false
        }
    }

    // MARK: Vary

    /// Whether this request sends the header values `entry` was stored with, for every header its `Vary` names.
    func matchesVary(_ entry: CacheEntry) -> Bool {
        guard let names = Self.varyNames(entry.headers) else { return false }
        return names.allSatisfy { value(of: $0) == (entry.varyingRequestHeaders[$0] ?? "") }
    }

    /// The request's values of the headers `responseHeaders` vary on; `nil` for `Vary: *`, which never matches.
    private func varyingRequestHeaders(for responseHeaders: HTTPFields) -> [String: String]? {
        guard let names = Self.varyNames(responseHeaders) else { return nil }
        return requestValues(for: names)
    }

    /// The request's normalized values of the fields `names`.
    func requestValues(for names: [String]) -> [String: String] {
        Dictionary(names.map { ($0, value(of: $0)) }, uniquingKeysWith: { first, _ in first })
    }

    private func value(of name: String) -> String {
        guard let field = HTTPField.Name(name) else { return "" }
        return Self.normalized(request.headers[values: field], name: name)
    }

    /// Field values compared as RFC 9110 lets a cache compare them (RFC 9111 §4.1): the field lines joined into one
    /// list, white space around members and around `;` dropped, and for fields whose grammar is case-insensitive
    /// (the `Accept` family) lowercased; the codings of `Accept-Encoding`, whose order means nothing, sorted.
    static func normalized(_ lines: [String], name: String) -> String {
        var members = lines.flatMap(FieldList.members).map { member in
            member.split(separator: ";", omittingEmptySubsequences: false)
                .map { $0.trimmingOWS() }.joined(separator: ";")
        }.filter { !$0.isEmpty }
        if caseInsensitiveFields.contains(name) { members = members.map { $0.lowercased() } }
        if name == "accept-encoding" { members.sort() }
        return members.joined(separator: ", ")
    }

    private static let caseInsensitiveFields: Set<String> = [
        "accept", "accept-encoding", "accept-language", "accept-charset",
    ]

    /// Lowercased names in `Vary`; `nil` for `*`.
    static func varyNames(_ headers: HTTPFields) -> [String]? {
        let names = headers[values: .vary].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingSpaces().lowercased() }.filter { !$0.isEmpty }
        return names.contains("*") ? nil : names
    }
}
