import NIOConcurrencyHelpers
import NIOHTTP1

/// How an event loop hands a response read whole to the task that waits for it, in two steps: the caller is woken
/// when the head arrives, and takes the whole answer once it is there — nearly always at once, because the loop
/// reads the rest of a small answer while the caller's thread wakes up. AsyncHTTPClient's async API wakes its
/// caller at the head too; waking at the end instead left the caller's wake-up, and the loop's, with nothing to
/// overlap, one request at a time. The caller gets the head as it wakes, to work on while the loop reads the rest.
///
/// Not generic: every request read whole makes one, and as a generic type its state was copied and destroyed
/// through value witnesses that looked up its metadata each time. Its continuation is unchecked (a checked one
/// allocates a canary and swaps it atomically on resume): it is stored under the lock and taken out of it by the
/// one call that resumes it, so it can be neither resumed twice nor dropped while the exchange runs.
///
/// What the loop hands over goes through the lock, not through the continuation: the continuation only wakes the
/// caller, which then takes the head and the answer under the lock. A continuation resumed before its task has
/// suspended on it is taken up by the concurrency runtime with an atomic that ThreadSanitizer cannot see, so a
/// value passed through it looked like a race with the loop that made it; the lock is an edge it sees.
final class AnswerHandoff: Sendable {
    typealias Head = HTTPResponseHead
    typealias Answer = CollectedAnswer

    private struct State {
        /// The caller, while it waits for the head or, after it, for the answer.
        var waiter: UnsafeContinuation<Void, Never>?
        var head: Head?
        var answer: Result<Answer, any Error>?
    }

    private let state = NIOLockedValueBox(State())

    /// Suspends until the head arrives, or until the exchange ends first, and returns the head (`nil` when the
    /// exchange ended without one: ``answer()`` then throws) with the answer when the exchange has ended already,
    /// as it often has by then; `start` starts the exchange.
    nonisolated(nonsending) func awaitHead(starting start: () -> Void) async -> (head: Head?, answer: Result<Answer, any Error>?) {
        await withUnsafeContinuation { continuation in
            state.withLockedValue { $0.waiter = continuation }
            start()
        }
        return state.withLockedValue { ($0.head.take(), $0.answer.take()) }
    }

    /// The head arrived (called on the loop).
    func headArrived(_ head: Head) {
        state.withLockedValue { state in
            state.head = head
            return state.waiter.take()
        }?.resume()
    }

    /// The exchange ended with `answer` (called on the loop).
    func finish(_ answer: Result<Answer, any Error>) {
        state.withLockedValue { state in
            state.answer = answer
            return state.waiter.take()
        }?.resume()
    }

    /// The whole answer, once the exchange has ended; for a caller that woke at the head before it did.
    nonisolated(nonsending) func answer() async throws -> Answer {
        await withUnsafeContinuation { continuation in
            let ended = state.withLockedValue { state in
                guard state.answer == nil else { return true }
                state.waiter = continuation
                return false
            }
            if ended { continuation.resume() }
        }
        guard let answer = state.withLockedValue({ $0.answer.take() }) else {
            throw CourierError(code: .invalidResponse, message: "the exchange ended without an answer")  // only after a second call
        }
        return try answer.get()
    }
}
