import DequeModule

/// Decides which requests may use the network now: a global limit, a per-host limit, three priorities that are
/// first-in first-out inside, and suspension, of everything or of single waiting requests. A pure value: each
/// event returns what to start, and the ``RequestPool`` that owns it does the starting.
///
/// The invariant after every event: no waiting request that is not held could start. So a new request starts at
/// once exactly when it has room, and it never overtakes a waiting one that could use the same room.
struct RequestScheduler: Sendable {
    /// How many requests may use the network at once; `nil` means no limit.
    struct Limits: Sendable, Hashable {
        var maxConcurrent: Int?
        var maxPerHost: Int?
    }

    /// What ``enqueue(_:host:priority:)`` decided.
    enum EnqueueAction: Sendable, Equatable {
        case start
        case wait
    }

    private struct Waiting: Sendable {
        let id: RequestID
        let host: String
    }

    private(set) var limits: Limits
    private(set) var isSuspended = false
    private var running: [RequestID: String] = [:]
    /// Counted only while a per-host limit is set: without one, a request's start and end hash no host name.
    private var runningPerHost: [String: Int] = [:]
    /// Indexed by ``RequestPriority/rawValue``. A request cancelled while waiting stays in its queue as a tombstone
    /// (it is no longer in ``waiting``) until draining reaches it or the queues are compacted, so a cancel costs
    /// O(1) instead of a search.
    private var queues = [Deque<Waiting>](repeating: [], count: RequestPriority.allCases.count)
    /// The requests waiting: what the queues hold, tombstones aside.
    private var waiting: Set<RequestID> = []
    /// Entries in the queues, tombstones included.
    private var queued = 0
    /// Waiting requests that may not start until released (suspended one by one).
    private var held: Set<RequestID> = []

    init(limits: Limits) {
        self.limits = limits
    }

    var runningCount: Int { running.count }
    var waitingCount: Int { waiting.count }
    func isRunning(_ id: RequestID) -> Bool { running[id] != nil }

    /// A request asks to use the network; a `held` one waits whatever the room, until ``release(_:)``.
    mutating func enqueue(
        _ id: RequestID,
        host: String,
        priority: RequestPriority,
        held isHeld: Bool = false
    ) -> EnqueueAction {
        assert(running[id] == nil && !waiting.contains(id), "\(id) asked the scheduler twice")
        if !isHeld, canStart(host: host) {
            markRunning(id, host: host)
            return .start
        }
        queues[priority.rawValue].append(Waiting(id: id, host: host))
        waiting.insert(id)
        if isHeld { held.insert(id) }
        queued += 1
        return .wait
    }

    /// Keeps the waiting request `id` from starting until ``release(_:)``; `false` when it is not waiting.
    mutating func hold(_ id: RequestID) -> Bool {
        guard waiting.contains(id) else { return false }
        held.insert(id)
        return true
    }

    /// Lets a held request start again; returns the waiting requests that start now.
    mutating func release(_ id: RequestID) -> [RequestID] {
        guard held.remove(id) != nil else { return [] }
        return drain()
    }

    /// A running request let go of the network; returns the waiting requests that start now.
    mutating func finish(_ id: RequestID) -> [RequestID] {
        guard let host = running.removeValue(forKey: id) else {
            preconditionFailure("\(id) finished without running")
        }
        if limits.maxPerHost != nil {
            let left = (runningPerHost[host] ?? 1) - 1
            runningPerHost[host] = left > 0 ? left : nil
        }
        return queued == 0 ? [] : drain()
    }

    /// A waiting request gave up (cancelled); `false` when it was not waiting.
    mutating func cancelWaiting(_ id: RequestID) -> Bool {
        guard waiting.remove(id) != nil else { return false }
        held.remove(id)
        if queued > 2 * waiting.count + 64 {  // mostly tombstones (a suspended pool whose requests were cancelled)
            for priority in queues.indices { queues[priority].removeAll { !waiting.contains($0.id) } }
            queued = waiting.count
        }
        return true
    }

    /// Stops starting waiting requests; running ones go on.
    mutating func suspend() {
        isSuspended = true
    }

    /// Starts again; returns the waiting requests that start now.
    mutating func resume() -> [RequestID] {
        isSuspended = false
        return drain()
    }

    /// New limits; returns the waiting requests that start now (when the limits grew).
    mutating func setLimits(_ limits: Limits) -> [RequestID] {
        if limits.maxPerHost != nil, self.limits.maxPerHost == nil {  // counted from now on
            runningPerHost = [:]
            for host in running.values { runningPerHost[host, default: 0] += 1 }
        }
        self.limits = limits
        return drain()
    }

    private func canStart(host: String) -> Bool {
        guard !isSuspended else { return false }
        if let max = limits.maxConcurrent, running.count >= max { return false }
        if let max = limits.maxPerHost, runningPerHost[host, default: 0] >= max { return false }
        return true
    }

    private mutating func markRunning(_ id: RequestID, host: String) {
        running[id] = host
        if limits.maxPerHost != nil { runningPerHost[host, default: 0] += 1 }
    }

    /// Starts waiting requests, most urgent first, skipping those whose host is full.
    private mutating func drain() -> [RequestID] {
        var started: [RequestID] = []
        for priority in queues.indices.reversed() {
            var index = queues[priority].startIndex
            while index < queues[priority].endIndex {
                guard !isSuspended, running.count < (limits.maxConcurrent ?? .max) else { return started }
                let candidate = queues[priority][index]
                if !waiting.contains(candidate.id) {  // cancelled while waiting
                    queues[priority].remove(at: index)
                    queued -= 1
                } else if held.isEmpty || !held.contains(candidate.id), canStart(host: candidate.host) {
                    queues[priority].remove(at: index)
                    queued -= 1
                    waiting.remove(candidate.id)
                    markRunning(candidate.id, host: candidate.host)
                    started.append(candidate.id)
                } else {
                    index += 1
                }
            }
        }
        return started
    }
}
