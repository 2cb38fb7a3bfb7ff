import NIOCore

/// Tells a request body that is still being written that the server has answered it with a status of 300 or more.
/// AsyncHTTPClient then stops asking for the body (its write futures stay pending) and waits for the body's end
/// before it finishes the request, so the writer must stop on its own: it ends the body at once, AsyncHTTPClient
/// fails the request's end with `requestStreamCancelled`, and the answer that came is delivered. Without it, a
/// server that refuses an upload early (a 409, a 413) without closing would hold the request forever.
final class EarlyAnswer: Sendable {
    private let state = Locked<(isAnswered: Bool, waiters: [@Sendable () -> Void])>((false, []))

    /// Whether the server has answered.
    var isAnswered: Bool { state.withLock { $0.isAnswered } }

    /// The server answered: every wait ends.
    func answered() {
        let waiters = state.withLock { state in
            defer { state = (true, []) }
            return state.waiters
        }
        for waiter in waiters { waiter() }
    }

    /// Calls `action` once the server has answered (at once if it has).
    func whenAnswered(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state in
            if state.isAnswered { return true }
            state.waiters.append(action)
            return false
        }
        if now { action() }
    }
}
