/// Work a session starts that no caller waits for — a stale-while-revalidate refresh: at most one per key at a
/// time (whether or not the session coalesces requests), and cancelled and awaited when the session shuts down,
/// so nothing it started outlives it.
final class BackgroundWork<Key: Hashable & Sendable>: Sendable {
    private struct State {
        var running: [Key: Task<Void, Never>] = [:]
        var isShutDown = false
    }

    private let state = Locked(State())

    /// How many run now.
    var count: Int { state.withLock { $0.running.count } }

    /// Starts `operation` for `key`, unless work for `key` already runs or the session is shutting down.
    func start(_ key: Key, _ operation: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            guard !state.isShutDown, state.running[key] == nil else { return }
            // Made under the lock, so the task's own removal below (which takes the lock) comes after this insertion.
            state.running[key] = Task {
                await operation()
                self.state.withLock { _ = $0.running.removeValue(forKey: key) }
            }
        }
    }

    /// Refuses new work, cancels what runs, and returns when all of it has ended.
    func shutdown() async {
        let running = state.withLock { state in
            state.isShutDown = true
            return Array(state.running.values)
        }
        for task in running { task.cancel() }
        for task in running { await task.value }
    }
}
