import HeapModule

/// Tells the pool which requests ran past their deadline, so it can cancel them through their cancellers.
///
/// One task sleeps until the earliest deadline of a request still in flight, for the whole pool: a timer per
/// request (scheduled, then cancelled as nearly every request finishes in time) cost more than the rest of the
/// pool's work for a small request. Finished requests leave their deadline in the heap; it is dropped when it
/// comes up, and the heap is rebuilt when such leftovers outnumber the live deadlines.
final class DeadlineWatch: Sendable {
    private struct Due: Comparable {
        let deadline: ContinuousClock.Instant
        let id: RequestID
        static func < (lhs: Due, rhs: Due) -> Bool { lhs.deadline < rhs.deadline }
    }

    private struct State {
        var due = Heap<Due>()
        var live: [RequestID: ContinuousClock.Instant] = [:]
        /// The watcher's generation, and when it wakes next; `nil` when no watcher runs.
        var generation = 0
        var wakes: ContinuousClock.Instant?
    }

    private let state = Locked(State())
    private let expire: @Sendable ([RequestID]) -> Void

    /// Expiries go late by up to this much, so requests that started together end in one wake-up.
    static let slack = Duration.milliseconds(5)

    /// A watch that hands the requests whose deadline passed to `expire`.
    init(expire: @escaping @Sendable ([RequestID]) -> Void) {
        self.expire = expire
    }

    /// Watches `id` until `deadline`, or until ``forget(_:)``.
    func watch(_ id: RequestID, until deadline: ContinuousClock.Instant) {
        let generation = state.withLock { state -> Int? in
            state.live[id] = deadline
            state.due.insert(Due(deadline: deadline, id: id))
            if state.due.count > 2 * state.live.count + 64 {
                state.due = Heap(state.live.map { Due(deadline: $0.value, id: $0.key) })
            }
            if let wakes = state.wakes, wakes <= deadline + Self.slack { return nil }  // the watcher wakes in time
            state.generation += 1  // a watcher sleeping for longer stops; a new one takes over
            state.wakes = deadline + Self.slack
            return state.generation
        }
        guard let generation else { return }
        Task { await self.run(generation: generation, firstWake: deadline + Self.slack) }
    }

    /// Stops watching `id`: it finished.
    func forget(_ id: RequestID) {
        state.withLock { _ = $0.live.removeValue(forKey: id) }
    }

    /// How many deadlines are watched.
    var count: Int { state.withLock { $0.live.count } }

    /// How many deadlines the heap holds, leftovers of finished requests included.
    var heldDeadlines: Int { state.withLock { $0.due.count } }

    private func run(generation: Int, firstWake: ContinuousClock.Instant) async {
        var wake = firstWake
        while true {
            do { try await Task.sleep(until: wake, tolerance: Self.slack, clock: .continuous) } catch { return }
            let (expired, next) = state.withLock { state -> ([RequestID], ContinuousClock.Instant?) in
                guard state.generation == generation else { return ([], nil) }  // replaced by a watcher that wakes sooner
                var expired: [RequestID] = []
                let now = ContinuousClock.now
                while let first = state.due.min {
                    guard state.live[first.id] == first.deadline else {
                        _ = state.due.popMin()  // finished, or watched again with a later deadline
                        continue
                    }
                    guard first.deadline <= now else { break }
                    _ = state.due.popMin()
                    state.live[first.id] = nil
                    expired.append(first.id)
                }
                state.wakes = state.due.min.map { $0.deadline + Self.slack }
                return (expired, state.wakes)
            }
            if !expired.isEmpty { expire(expired) }
            guard let next else { return }
            wake = next
        }
    }
}
