public import HTTPTypes

/// What identifies one version of a remote file: its entity tag and modification date, as the server sent
/// them. Resuming sends it in `If-Range` and checks it again on the answer, so bytes of two versions never
/// end up in one file.
public struct EntityValidator: Codable, Hashable, Sendable {
    /// The `ETag`, when the server sent one.
    public var etag: String?
    /// The `Last-Modified` date, as sent.
    public var lastModified: String?

    /// Creates a validator.
    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// The validator of a response.
    public init(_ headers: HTTPFields) {
        self.init(etag: headers[.eTag], lastModified: headers[.lastModified])
    }

    /// The `If-Range` value: a strong entity tag, else the date (RFC 9110 §13.1.5 forbids weak tags there).
    /// `nil` when the server gave neither; a resume then relies on the length and the checksum alone.
    var ifRange: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }

    /// Whether a response's validator names the same version: equal entity tags when both sides have one,
    /// else equal dates when both have one, else nothing contradicts it.
    func isSameVersion(as other: EntityValidator) -> Bool {
        if let etag, let otherTag = other.etag { return etag == otherTag }
        if let lastModified, let otherDate = other.lastModified { return lastModified == otherDate }
        return true
    }
}
