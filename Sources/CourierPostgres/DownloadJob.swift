public import Courier

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One file to download through a ``DownloadQueue``: a row of `courier_download_jobs`.
public struct DownloadJob: Sendable, Hashable, Identifiable {
    /// Where a job is in its life.
    public enum State: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Waiting for a worker.
        case queued
        /// A worker holds its lease and downloads it.
        case running
        /// Its file is in place (and verified, when it has a checksum).
        case completed
        /// It failed for good: a permanent error, or as many attempts as it was allowed.
        case failed

        /// The state's name.
        public var description: String { rawValue }
    }

    /// The job's number in the queue.
    public let id: Int64
    /// What to download.
    public var url: URL
    /// Where the file goes (an absolute path, which every worker must be able to reach).
    public var destination: URL
    /// The digest the file must have, checked before it goes into place.
    public var checksum: DownloadChecksum?
    /// Higher runs first; equal priorities run in the order added.
    public var priority: Int
    /// How many connections its download may use.
    public var connections: Int
    /// Where it is.
    public var state: State
    /// How many times a worker took it (a worker that died counts).
    public var attempts: Int
    /// How many attempts it may take before it fails for good.
    public var maxAttempts: Int
    /// The worker holding it now, while running.
    public var worker: String?
    /// The bytes its file holds so far, as its worker last reported them.
    public var completedBytes: Int64
    /// The file's length, once known.
    public var totalBytes: Int64?
    /// Why it failed (`code: message`), for a failed job; for a queued one, why its last attempt ended.
    public var lastError: String?
}

/// The queue as a whole: how many jobs are in each state, how many bytes are done, and how fast they come.
public struct DownloadQueueStatus: Sendable, Hashable, CustomStringConvertible {
    /// Jobs per state (every state is present, zero when empty).
    public var counts: [DownloadJob.State: Int]
    /// Bytes done over every job.
    public var completedBytes: Int64
    /// The known lengths of every job added up (jobs whose length is not known yet add nothing).
    public var totalBytes: Int64
    /// Bytes per second since the previous status of the same sequence; 0 for a single reading.
    public var bytesPerSecond: Double

    /// How many jobs there are.
    public var jobCount: Int { counts.values.reduce(0, +) }
    /// Whether every job has ended, completed or failed.
    public var isSettled: Bool { (counts[.queued] ?? 0) == 0 && (counts[.running] ?? 0) == 0 }

    /// `3 queued, 2 running, 10 completed, 1 failed; 52.4 MB of 80.0 MB`.
    public var description: String {
        let states = DownloadJob.State.allCases.map { "\(counts[$0] ?? 0) \($0)" }.joined(separator: ", ")
        return "\(states); \(ByteCount.format(completedBytes)) of \(ByteCount.format(totalBytes))"
            + (bytesPerSecond > 0 ? " at \(ByteCount.format(Int64(bytesPerSecond)))/s" : "")
    }
}
