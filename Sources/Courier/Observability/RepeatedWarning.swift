import Logging

/// A warning about a condition that would otherwise be logged on every request (a cookie jar whose file cannot be
/// written): logged the first time, then at most once per ``interval``, saying how many times it happened in
/// between, so a log is not flooded and nothing is hidden.
final class RepeatedWarning: Sendable {
    /// The least time between two lines.
    let interval: Duration
    private let state = Locked<(lastLogged: ContinuousClock.Instant?, unlogged: Int)>((nil, 0))

    init(interval: Duration = .seconds(60)) {
        self.interval = interval
    }

    /// Logs `message` on `logger` unless a line was logged less than ``interval`` ago; then it is only counted.
    func warn(_ logger: Logger, _ message: @autoclosure () -> String, metadata: Logger.Metadata = [:]) {
        let now = ContinuousClock.now
        let unlogged = state.withLock { state -> Int? in
            if let last = state.lastLogged, last.duration(to: now) < interval {
                state.unlogged += 1
                return nil
            }
            defer { state = (now, 0) }
            return state.unlogged
        }
        guard let unlogged else { return }
        var metadata = metadata
        if unlogged > 0 { metadata["courier.repeated"] = "\(unlogged)" }
        let again = unlogged > 0 ? " (and \(unlogged) more times since it was last logged)" : ""
        logger.warning("\(message())\(again)", metadata: metadata)
    }
}
