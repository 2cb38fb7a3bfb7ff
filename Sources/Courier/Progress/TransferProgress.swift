#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How far a transfer has come: a download (or all of a manager's downloads) or an upload.
public struct TransferProgress: Sendable, Hashable, CustomStringConvertible {
    /// Bytes done: in a download's part file (or, once completed, its destination), or taken by the transport
    /// from an upload's body.
    public var completedBytes: Int64
    /// The length, once known: the file's length as the server said it, or the upload body's.
    public var totalBytes: Int64?
    /// The recent transfer rate, averaged over about two seconds.
    public var bytesPerSecond: Double

    /// Creates a progress value.
    public init(completedBytes: Int64, totalBytes: Int64?, bytesPerSecond: Double) {
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
        self.bytesPerSecond = bytesPerSecond
    }

    /// `completedBytes / totalBytes`, when the total is known (1 for an empty file).
    public var fraction: Double? {
        guard let totalBytes else { return nil }
        return totalBytes == 0 ? 1 : min(1, Double(completedBytes) / Double(totalBytes))
    }

    /// The time left at the current rate, when the total is known and bytes are moving.
    public var estimatedTimeRemaining: Duration? {
        guard let totalBytes, bytesPerSecond > 0 else { return nil }
        return .seconds(Double(max(0, totalBytes - completedBytes)) / bytesPerSecond)
    }

    /// `12.4 MB of 100 MB (12%), 3.1 MB/s, 28 s left`.
    public var description: String {
        var text = ByteCount.format(completedBytes)
        if let totalBytes, let fraction {
            text += " of \(ByteCount.format(totalBytes)) (\(Int((fraction * 100).rounded(.down)))%)"
        }
        text += ", \(ByteCount.format(Int64(bytesPerSecond)))/s"
        if let eta = estimatedTimeRemaining { text += ", \(Int(eta.seconds.rounded(.up))) s left" }
        return text
    }
}

/// How far a download (or all of a manager's downloads) has come.
public typealias DownloadProgress = TransferProgress

/// How far an upload has come.
public typealias UploadProgress = TransferProgress

/// Turns byte counts sampled over time into a rate: the bytes moved over roughly the last two seconds.
struct RateMeter: Sendable {
    private var samples: [(time: ContinuousClock.Instant, bytes: Int64)] = []
    private let window: Duration

    /// A meter whose first rate counts from `bytes` at `time`: the transfer's start, so that a transfer done
    /// before a second sample still has a rate.
    init(window: Duration = .seconds(2), from bytes: Int64 = 0, at time: ContinuousClock.Instant = .now) {
        self.window = window
        samples = [(time, bytes)]
    }

    /// Records `bytes` (a running total) at `time` and returns the rate in bytes per second.
    mutating func record(_ bytes: Int64, at time: ContinuousClock.Instant = .now) -> Double {
        samples.append((time, bytes))
        while let first = samples.first, first.time.duration(to: time) > window, samples.count > 2 {
            samples.removeFirst()
        }
        guard let first = samples.first, first.time < time else { return 0 }
        return max(0, Double(bytes - first.bytes) / first.time.duration(to: time).seconds)
    }

    /// Forgets the history (after a pause, the old rate means nothing) and counts from `bytes` now.
    mutating func reset(from bytes: Int64) { samples = [(ContinuousClock.now, bytes)] }
}
