/// How a resumable upload behaves.
public struct ResumableUploadOptions: Sendable {
    /// Whether the file's SHA-256 goes into the record, so a resumed upload also checks the content has not
    /// changed (the size and modification time are always checked). It reads the whole file once more.
    public var checksDigest: Bool
    /// An average rate limit in bytes per second; `nil` sends as fast as the connection takes it.
    public var bytesPerSecond: Int?
    /// Failed requests in a row, with no byte confirmed in between, before the upload gives up.
    public var maxFailuresInARow: Int
    /// The first wait before asking the server again after a failure; it doubles with each failure in a row.
    public var retryDelay: Duration
    /// Whether the record beside the file is kept, so another process can resume after this one dies.
    public var keepsRecord: Bool

    /// Options with the defaults: no digest, no rate limit, 8 failures in a row, 250 ms, a record kept.
    public init(
        checksDigest: Bool = false,
        bytesPerSecond: Int? = nil,
        maxFailuresInARow: Int = 8,
        retryDelay: Duration = .milliseconds(250),
        keepsRecord: Bool = true
    ) {
        self.checksDigest = checksDigest
        self.bytesPerSecond = bytesPerSecond
        self.maxFailuresInARow = maxFailuresInARow
        self.retryDelay = retryDelay
        self.keepsRecord = keepsRecord
    }
}
