#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a download reports, in order, on ``Download/events()``.
public enum DownloadEvent: Sendable, CustomStringConvertible {
    /// The state changed (also the first event a new subscriber gets).
    case state(DownloadState)
    /// Bytes moved; at most about ten a second.
    case progress(DownloadProgress)
    /// The transfer goes on from the bytes already on disk: `at` of `of` (when the length is known).
    case resumed(at: Int64, of: Int64?)
    /// The server sent the whole file instead of the rest (it ignored the range or the file changed), so the
    /// partial bytes were thrown away and the download starts again from zero.
    case restarted(reason: String)
    /// A transient failure; the download tries again from the last byte on disk.
    case retrying(attempt: Int, error: CourierError)
    /// The file is complete, verified and in place.
    case completed(URL)
    /// The download stopped with an error; the partial file is kept for a later resume (unless no byte had been
    /// written, or the download is not ``DownloadOptions/resumable``).
    case failed(CourierError)

    /// One line for logs.
    public var description: String {
        switch self {
        case .state(let state): "state \(state)"
        case .progress(let progress): "progress \(progress)"
        case .resumed(let at, let total):
            "resuming at \(ByteCount.format(at))" + (total.map { " of \(ByteCount.format($0))" } ?? "")
        case .restarted(let reason): "restarted: \(reason)"
        case .retrying(let attempt, let error): "retry \(attempt) after \(error)"
        case .completed(let url): "completed \(url.path)"
        case .failed(let error): "failed: \(error)"
        }
    }
}
