/// Where a download is in its life.
public enum DownloadState: String, Codable, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Added but not started.
    case idle
    /// Started and queued for a slot in the manager.
    case waiting
    /// Transferring bytes (or verifying them).
    case running
    /// Stopped by the caller with its partial file and resume record kept.
    case paused
    /// Verified and moved into place.
    case completed
    /// Stopped by an error; the partial file is kept, so it can be resumed.
    case failed
    /// Stopped by the caller with its partial file removed.
    case cancelled

    /// Whether nothing more happens without a call: completed, failed or cancelled.
    public var isFinal: Bool { self == .completed || self == .failed || self == .cancelled }

    /// The name, as in `running`.
    public var description: String { rawValue }
}
