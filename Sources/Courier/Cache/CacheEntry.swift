public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One stored answer: the response's status, headers and body, when it was stored, and what freshness
/// decisions need later.
public struct CacheEntry: Sendable, Hashable {
    /// The key's text (see ``CacheKey``).
    public var key: String
    /// The method of the request that got the answer.
    public var method: String
    /// The URL of the request, normalised.
    public var url: String
    /// The status.
    public var status: Int
    /// The response headers.
    public var headers: HTTPFields
    /// The values, in the request, of the headers the response's `Vary` names; a later request must send the
    /// same values to use the entry.
    public var varyingRequestHeaders: [String: String]
    /// When the response was received (RFC 9111's `response_time`).
    public var storedAt: Date
    /// The response's age when it was received, from its `Age` and `Date` headers (RFC 9111 §4.2.3).
    public var initialAge: Duration
    /// When the entry stops being fresh, when that was known as it was stored; `nil` when it has no lifetime of
    /// its own (only a policy's time-to-live decides).
    public var expiresAt: Date?
    /// The body, decompressed.
    public var body: Data

    /// Creates an entry.
    public init(
        key: String,
        method: String,
        url: String,
        status: Int,
        headers: HTTPFields,
        varyingRequestHeaders: [String: String] = [:],
        storedAt: Date,
        initialAge: Duration = .zero,
        expiresAt: Date? = nil,
        body: Data
    ) {
        self.key = key
        self.method = method
        self.url = url
        self.status = status
        self.headers = headers
        self.varyingRequestHeaders = varyingRequestHeaders
        self.storedAt = storedAt
        self.initialAge = initialAge
        self.expiresAt = expiresAt
        self.body = body
    }

    /// The `ETag` validator, when the response had one.
    public var etag: String? { headers[.eTag] }
    /// The `Last-Modified` validator, when the response had one.
    public var lastModified: String? { headers[.lastModified] }

    /// RFC 9111's current age at `now`: the age it arrived with plus the time it has been stored.
    public func age(at now: Date) -> Duration {
        initialAge + .seconds(max(0, now.timeIntervalSince(storedAt)))
    }

    /// What listings show: everything but the body.
    public var summary: CacheEntrySummary {
        CacheEntrySummary(
            key: key,
            method: method,
            url: url,
            status: status,
            storedAt: storedAt,
            expiresAt: expiresAt,
            bodyBytes: body.count,
            storedBytes: body.count
        )
    }
}

/// An entry without its body, for listings and statistics.
public struct CacheEntrySummary: Sendable, Hashable {
    /// The key's text.
    public var key: String
    /// The request method.
    public var method: String
    /// The normalised URL.
    public var url: String
    /// The status.
    public var status: Int
    /// When it was stored.
    public var storedAt: Date
    /// When it stops being fresh, if known.
    public var expiresAt: Date?
    /// The body's size.
    public var bodyBytes: Int
    /// What the entry takes in its store (compressed on disk).
    public var storedBytes: Int

    /// Creates a summary.
    public init(
        key: String,
        method: String,
        url: String,
        status: Int,
        storedAt: Date,
        expiresAt: Date?,
        bodyBytes: Int,
        storedBytes: Int
    ) {
        self.key = key
        self.method = method
        self.url = url
        self.status = status
        self.storedAt = storedAt
        self.expiresAt = expiresAt
        self.bodyBytes = bodyBytes
        self.storedBytes = storedBytes
    }
}
