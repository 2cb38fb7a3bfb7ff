/// How a ``Batch`` runs.
public struct BatchOptions: Sendable {
    /// What one failure does to the rest.
    public enum Mode: Sendable, Hashable {
        /// The first failure cancels every request still running or waiting (RBEFireworks'
        /// shouldCancelAllIfOneFailed); their results are ``CourierError/Code/cancelled``.
        case failFast
        /// Every request runs to its own end; each has its own result.
        case collectAll
    }

    /// Requests of the batch running at once (at least 1; default 8).
    public var concurrency: Int
    /// Fail fast or collect all (the default).
    public var mode: Mode
    /// Told when the batch starts and ends.
    public var plugins: [any BatchPlugin]

    /// Creates options.
    public init(concurrency: Int = 8, mode: Mode = .collectAll, plugins: [any BatchPlugin] = []) {
        self.concurrency = concurrency
        self.mode = mode
        self.plugins = plugins
    }
}

/// Told about a whole batch (YTKNetwork's batch accessories): before the first request and after the last.
public protocol BatchPlugin: Sendable {
    /// The batch is about to start `total` requests.
    func willStart(total: Int)
    /// The batch ended; `progress` has the final counts.
    func didFinish(_ progress: BatchProgress)
}

extension BatchPlugin {
    /// Does nothing.
    public func willStart(total: Int) {}
    /// Does nothing.
    public func didFinish(_ progress: BatchProgress) {}
}

/// How far a batch has come.
public struct BatchProgress: Sendable, Hashable, CustomStringConvertible {
    /// Requests in the batch.
    public var total: Int
    /// Requests that ended, whatever their outcome.
    public var completed: Int
    /// Requests that failed (cancelled ones included).
    public var failed: Int
    /// Body bytes received by the requests that ended.
    public var bytesReceived: Int

    /// Creates a progress value.
    public init(total: Int, completed: Int = 0, failed: Int = 0, bytesReceived: Int = 0) {
        self.total = total
        self.completed = completed
        self.failed = failed
        self.bytesReceived = bytesReceived
    }

    /// Completed over total, from 0 to 1 (1 for an empty batch).
    public var fraction: Double { total == 0 ? 1 : Double(completed) / Double(total) }

    /// Whether every request ended.
    public var isFinished: Bool { completed == total }

    /// `7/10 done, 1 failed, 7168 bytes`.
    public var description: String { "\(completed)/\(total) done, \(failed) failed, \(bytesReceived) bytes" }
}
