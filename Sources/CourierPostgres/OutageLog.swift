import Logging

/// Logs a shared store's trouble once per outage: the first failure as a warning, the recovery as a notice,
/// and nothing for the failures in between (a store that is down would otherwise log every request).
struct OutageLog: Sendable {
    private(set) var isDown = false
    let logger: Logger
    let what: String

    mutating func failed(_ error: any Error) {
        guard !isDown else { return }
        isDown = true
        logger.warning("\(what) is unavailable; requests go on without it", metadata: ["reason": "\(error)"])
    }

    mutating func succeeded() {
        guard isDown else { return }
        isDown = false
        logger.notice("\(what) is available again")
    }
}
