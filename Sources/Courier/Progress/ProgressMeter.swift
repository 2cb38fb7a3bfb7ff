/// Counts the bytes of a transfer (a body going out, or one coming in) and publishes ``TransferProgress``,
/// throttled to about ten values a second, with the latest replayed to a new subscriber.
final class ProgressMeter: Sendable {
    private struct State {
        var done: Int64 = 0
        var total: Int64?
        var lastPublished: ContinuousClock.Instant?
        var rate = RateMeter()
    }

    let updates = EventBroadcaster<TransferProgress>(replaysLatest: true, bufferLimit: 16)

    /// The meter of the body the current task's call reads, set by ``Session/transfer(_:)`` around its call.
    @TaskLocal static var receiving: ProgressMeter?
    private let state: Locked<State>

    init(total: Int64?) { state = Locked(State(total: total)) }

    /// A body starts (again, after a redirect or a retry): counting starts from zero, towards `total` when the
    /// head declared one.
    func start(total: Int64?) {
        state.withLock { state in
            state.done = 0
            state.total = total
            state.rate.reset(from: 0)
        }
    }

    /// Counts `count` more bytes; publishes when 100 ms have passed since the last value.
    func add(_ count: Int) {
        let now = ContinuousClock.now
        let value = state.withLock { state -> TransferProgress? in
            state.done += Int64(count)
            let rate = state.rate.record(state.done, at: now)
            guard state.lastPublished.map({ $0.duration(to: now) >= .milliseconds(100) }) ?? true else { return nil }
            state.lastPublished = now
            return TransferProgress(completedBytes: state.done, totalBytes: state.total, bytesPerSecond: rate)
        }
        if let value { updates.yield(value) }
    }

    /// Publishes the final value and ends the stream.
    func finish() {
        let value = state.withLock { state in
            TransferProgress(
                completedBytes: state.done,
                totalBytes: state.total,
                bytesPerSecond: state.rate.record(state.done)
            )
        }
        updates.yield(value)
        updates.finish()
    }
}
