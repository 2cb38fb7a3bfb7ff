import HeapModule

/// The deadlines of a pool's requests and when its one watcher wakes: a pure value the pool keeps inside its
/// state, under the same lock as the requests, so a request's deadline costs no lock of its own.
///
/// One watcher sleeps until the earliest deadline, for the whole pool: a timer per request (scheduled, then
/// cancelled as nearly every request finishes in time) cost more than the rest of the pool's work for a small
/// request. A finished request leaves its deadline in the heap; it is dropped when it comes up, and the pool
/// rebuilds the heap when such leftovers outnumber its requests.
struct DeadlineSchedule {
    /// One request's deadline.
    struct Due: Comparable {
        let deadline: ContinuousClock.Instant
        let id: RequestID
        static func < (lhs: Due, rhs: Due) -> Bool { lhs.deadline < rhs.deadline }
    }

    /// A watcher to start: it sleeps until `wake`, then calls ``expire(generation:now:isLive:)`` with `generation`.
    struct Watcher: Equatable {
        let generation: Int
        let wake: ContinuousClock.Instant
    }

    /// Expiries go late by up to this much, so requests that started together end in one wake-up.
    static let slack = Duration.milliseconds(5)

    private var due = Heap<Due>()
    /// The current watcher's generation; a watcher of an older one stops when it wakes.
    private var generation = 0
    /// When the current watcher wakes; `nil` when none runs.
    private var wakes: ContinuousClock.Instant?

    /// How many deadlines the heap holds, leftovers of finished requests included.
    var count: Int { due.count }

    /// Adds `id`'s deadline; returns a watcher to start when none wakes in time for it (a watcher sleeping for
    /// longer is replaced: it stops when it wakes).
    mutating func add(_ id: RequestID, deadline: ContinuousClock.Instant) -> Watcher? {
        due.insert(Due(deadline: deadline, id: id))
        if let wakes, wakes <= deadline + Self.slack { return nil }
        generation += 1
        wakes = deadline + Self.slack
        return Watcher(generation: generation, wake: deadline + Self.slack)
    }

    /// Replaces the heap with the deadlines of the requests still in flight, dropping the leftovers.
    mutating func rebuild(_ live: [Due]) {
        due = Heap(live)
    }

    /// The watcher of `generation` woke at `now`: the requests whose deadline has passed (of those `isLive` says
    /// still run with that deadline), and when to wake next (`nil`: the watcher stops). A replaced watcher gets
    /// nothing and stops.
    mutating func expire(generation: Int, now: ContinuousClock.Instant, isLive: (Due) -> Bool)
        -> (expired: [RequestID], next: ContinuousClock.Instant?) {
        guard generation == self.generation else { return ([], nil) }
        var expired: [RequestID] = []
        while let first = due.min {
            guard isLive(first) else {
                _ = due.popMin()  // finished
                continue
            }
            guard first.deadline <= now else { break }
            _ = due.popMin()
            expired.append(first.id)
        }
        wakes = due.min.map { $0.deadline + Self.slack }
        return (expired, wakes)
    }
}

extension DeadlineSchedule.Watcher {
    /// Starts the watcher: a task that sleeps until ``wake``, then asks `expire` (with this watcher's generation
    /// and the time) what is due and when to wake next, and hands each due item to `fire`, for as long as a next
    /// wake comes back. It holds only what the two closures hold.
    func run<Due: Sendable>(expire: @escaping @Sendable (_ generation: Int, _ now: ContinuousClock.Instant) -> (due: [Due], next: ContinuousClock.Instant?),
                            fire: @escaping @Sendable (Due) -> Void) {
        Task { [generation, wake] in
            var wake = wake
            while true {
                do { try await Task.sleep(until: wake, tolerance: DeadlineSchedule.slack, clock: .continuous) } catch { return }
                let (due, next) = expire(generation, .now)
                for item in due { fire(item) }
                guard let next else { return }
                wake = next
            }
        }
    }
}
