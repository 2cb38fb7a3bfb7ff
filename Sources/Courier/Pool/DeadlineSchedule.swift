import HeapModule

/// The deadlines of a pool's requests and when its one watcher wakes: a pure value the pool keeps inside its
/// state, under the same lock as the requests, so a request's deadline costs no lock of its own.
///
/// One watcher sleeps until the earliest deadline, for the whole pool: a timer per request (scheduled, then
/// cancelled as nearly every request finishes in time) cost more than the rest of the pool's work for a small
/// request. A finished request leaves its deadline in the heap; it is dropped when it comes up, and the pool
/// rebuilds the heap when such leftovers outnumber its requests.
///
/// Instants are kept as ``Tick``s: `ContinuousClock.Instant` is a resilient type of the standard library, so a
/// struct holding one has no fixed layout, and every copy of it (each step of a heap insert) went through the
/// runtime's value witnesses.
struct DeadlineSchedule {
    /// One request's deadline.
    struct Due: Comparable {
        let tick: Tick
        let id: RequestID
        static func < (lhs: Due, rhs: Due) -> Bool { lhs.tick < rhs.tick }
    }

    /// A watcher to start: it sleeps until `wake`, then calls ``expire(generation:now:isLive:)`` with `generation`.
    struct Watcher: Equatable {
        let generation: Int
        private let wakeTick: Tick
        var wake: ContinuousClock.Instant { wakeTick.instant }

        init(generation: Int, wake: ContinuousClock.Instant) {
            self.init(generation: generation, wakeTick: Tick(wake))
        }

        fileprivate init(generation: Int, wakeTick: Tick) {
            self.generation = generation
            self.wakeTick = wakeTick
        }
    }

    /// Expiries go late by up to this much, so requests that started together end in one wake-up.
    static let slack = Duration.milliseconds(5)
    /// ``slack`` as a tick, converted once rather than at every deadline added.
    private static let slackTick = Tick(slack)

    private var due = Heap<Due>()
    /// The current watcher's generation; a watcher of an older one stops when it wakes.
    private var generation = 0
    /// When the current watcher wakes; `nil` when none runs.
    private var wakes: Tick?

    /// How many deadlines the heap holds, leftovers of finished requests included.
    var count: Int { due.count }

    /// Adds `id`'s deadline; returns a watcher to start when none wakes in time for it (a watcher sleeping for
    /// longer is replaced: it stops when it wakes).
    mutating func add(_ id: RequestID, deadline: ContinuousClock.Instant) -> Watcher? {
        add(id, tick: Tick(deadline))
    }

    /// ``add(_:deadline:)`` with the deadline as a tick.
    mutating func add(_ id: RequestID, tick: Tick) -> Watcher? {
        due.insert(Due(tick: tick, id: id))
        let wake = tick + Self.slackTick
        if let wakes, wakes <= wake { return nil }
        generation += 1
        wakes = wake
        return Watcher(generation: generation, wakeTick: wake)
    }

    /// Replaces the heap with the deadlines of the requests still in flight, dropping the leftovers.
    mutating func rebuild(_ live: [Due]) {
        due = Heap(live)
    }

    /// The watcher of `generation` woke at `now`: the requests whose deadline has passed (of those `isLive` says
    /// still run with that deadline), and when to wake next (`nil`: the watcher stops). A replaced watcher gets
    /// nothing and stops.
    mutating func expire(
        generation: Int,
        now: ContinuousClock.Instant,
        isLive: (Due) -> Bool
    )
        -> (expired: [RequestID], next: ContinuousClock.Instant?)
    {
        guard generation == self.generation else { return ([], nil) }
        var expired: [RequestID] = []
        let now = Tick(now)
        while let first = due.min {
            guard isLive(first) else {
                _ = due.popMin()  // finished
                continue
            }
            guard first.tick <= now else { break }
            _ = due.popMin()
            expired.append(first.id)
        }
        wakes = due.min.map { $0.tick + Self.slackTick }
        return (expired, wakes?.instant)
    }
}

extension DeadlineSchedule.Watcher {
    /// Starts the watcher: a task that sleeps until ``wake``, then asks `expire` (with this watcher's generation
    /// and the time) what is due and when to wake next, and hands each due item to `fire`, for as long as a next
    /// wake comes back. It holds only what the two closures hold.
    func run<Due: Sendable>(
        expire:
            @escaping @Sendable (_ generation: Int, _ now: ContinuousClock.Instant) -> (
                due: [Due], next: ContinuousClock.Instant?
            ),
        fire: @escaping @Sendable (Due) -> Void
    ) {
        Task { [generation, wake] in
            var wake = wake
            while true {
                do { try await Task.sleep(until: wake, tolerance: DeadlineSchedule.slack, clock: .continuous) } catch {
                    return
                }
                let (due, next) = expire(generation, .now)
                for item in due { fire(item) }
                guard let next else { return }
                wake = next
            }
        }
    }
}
