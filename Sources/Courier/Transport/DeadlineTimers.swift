/// Deadlines of many exchanges under one sleeping task: what a transport that has no timer of its own (URLSession's
/// per-request total) uses instead of a timer task per request. Built on the pool's ``DeadlineSchedule``.
package final class DeadlineTimers: Sendable {
    /// One deadline that is still set.
    private struct Timer {
        let deadline: Tick
        let action: @Sendable () -> Void
    }

    private struct State {
        var schedule = DeadlineSchedule()
        var timers: [RequestID: Timer] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    /// Creates a set with no deadlines.
    package init() {}

    /// Runs `action` at `deadline` unless ``cancel(_:)`` comes first; returns the token for that.
    package func add(_ deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> RequestID {
        let (id, watcher) = state.withLock { state in
            state.nextID += 1
            let id = RequestID(rawValue: state.nextID)
            let tick = Tick(deadline)
            state.timers[id] = Timer(deadline: tick, action: action)
            if state.schedule.count > 2 * state.timers.count + 64 {  // mostly cancelled timers' leftovers
                state.schedule.rebuild(state.timers.map { DeadlineSchedule.Due(tick: $0.value.deadline, id: $0.key) })
            }
            return (id, state.schedule.add(id, tick: tick))
        }
        watcher?.run(
            expire: { [state] generation, now in
                state.withLock { state in
                    let timers = state.timers
                    let (expired, next) = state.schedule.expire(generation: generation, now: now) {
                        timers[$0.id]?.deadline == $0.tick
                    }
                    return (expired.compactMap { state.timers.removeValue(forKey: $0)?.action }, next)
                }
            },
            fire: { $0() }
        )
        return id
    }

    /// The deadline of `id` no longer matters (the exchange ended).
    package func cancel(_ id: RequestID) {
        _ = state.withLock { $0.timers.removeValue(forKey: id) }
    }
}
