import DequeModule

/// Which downloads run and which wait: at most `limit` run, the rest wait by priority, first-in first-out
/// within one. A pure value owned by the ``DownloadManager``.
struct DownloadScheduler: Sendable {
    var limit: Int
    private(set) var running: Set<DownloadID> = []
    private var waiting: [RequestPriority: Deque<DownloadID>] = [:]

    init(limit: Int) { self.limit = max(1, limit) }

    /// The waiting downloads in the order they will start.
    var waitingInOrder: [DownloadID] {
        RequestPriority.allCases.sorted(by: >).flatMap { Array(waiting[$0] ?? []) }
    }

    /// Queues `id` behind the others of its priority (once). A download queued again while its last transfer
    /// still holds its slot (resumed the moment it failed, before the manager heard the slot was free) waits until
    /// ``slotFreed(_:)``: it is not lost, and it never runs twice at once.
    mutating func enqueue(_ id: DownloadID, priority: RequestPriority) {
        guard !(waiting[priority]?.contains(id) ?? false) else { return }
        waiting[priority, default: []].append(id)
    }

    /// Takes `id` out of the waiting line (paused, cancelled).
    mutating func removeWaiting(_ id: DownloadID) {
        for priority in RequestPriority.allCases { waiting[priority]?.removeAll { $0 == id } }
    }

    /// Frees `id`'s slot.
    mutating func slotFreed(_ id: DownloadID) { running.remove(id) }

    /// The next download to start when a slot is free, now counted as running.
    mutating func next() -> DownloadID? {
        guard running.count < limit else { return nil }
        for priority in RequestPriority.allCases.sorted(by: >) {
            // Passing over one whose last transfer has not freed its slot yet.
            if let index = waiting[priority]?.firstIndex(where: { !running.contains($0) }),
                let id = waiting[priority]?.remove(at: index)
            {
                running.insert(id)
                return id
            }
        }
        return nil
    }
}
