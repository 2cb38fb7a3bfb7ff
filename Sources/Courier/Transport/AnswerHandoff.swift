import NIOConcurrencyHelpers
import NIOHTTP1

/// How an event loop hands a response read whole to the task that waits for it, in two steps: the caller is woken
/// when the head arrives, and takes the whole answer once it is there — nearly always at once, because the loop
/// reads the rest of a small answer while the caller's thread wakes up. AsyncHTTPClient's async API wakes its
/// caller at the head too; waking at the end instead left the caller's wake-up, and the loop's, with nothing to
/// overlap, one request at a time. The caller gets the head as it wakes, to work on while the loop reads the rest.
///
/// Not generic: every request read whole makes one, and as a generic type its state was copied and destroyed
/// through value witnesses that looked up its metadata each time. Its continuations are unchecked (a checked one
/// allocates a canary and swaps it atomically on resume): each is stored under the lock and taken out of it by
/// the one call that resumes it, so none can be resumed twice or dropped while the exchange runs.
final class AnswerHandoff: Sendable {
    typealias Head = HTTPResponseHead
    typealias Answer = CollectedAnswer

    private struct State {
        var headWaiter: UnsafeContinuation<Head?, Never>?
        var answer: Result<Answer, any Error>?
        var answerWaiter: UnsafeContinuation<Answer, any Error>?
    }

    private let state = NIOLockedValueBox(State())

    /// Suspends until the head arrives, and returns it, or until the exchange ends first (`nil`: ``answer()``
    /// then throws); `start` starts the exchange.
    nonisolated(nonsending) func awaitHead(starting start: () -> Void) async -> Head? {
        await withUnsafeContinuation { continuation in
            state.withLockedValue { $0.headWaiter = continuation }
            start()
        }
    }

    /// The head arrived (called on the loop).
    func headArrived(_ head: Head) {
        state.withLockedValue { $0.headWaiter.take() }?.resume(returning: head)
    }

    /// The exchange ended with `answer` (called on the loop).
    func finish(_ answer: Result<Answer, any Error>) {
        let (headWaiter, answerWaiter) = state.withLockedValue { state in
            let answerWaiter = state.answerWaiter.take()
            if answerWaiter == nil { state.answer = answer }
            return (state.headWaiter.take(), answerWaiter)
        }
        headWaiter?.resume(returning: nil)
        answerWaiter?.resume(with: answer)
    }

    /// The whole answer when the exchange has ended already, as it nearly always has by the time the caller
    /// asks: taken without an async call. `nil` when it has not; then ``answer()`` waits for it.
    func takeAnswer() -> Result<Answer, any Error>? {
        state.withLockedValue { $0.answer.take() }
    }

    /// The whole answer: at once when the exchange has ended, else once it does.
    nonisolated(nonsending) func answer() async throws -> Answer {
        if let answer = takeAnswer() { return try answer.get() }
        return try await withUnsafeThrowingContinuation { continuation in
            let answer = state.withLockedValue { state in
                let answer = state.answer.take()
                if answer == nil { state.answerWaiter = continuation }
                return answer
            }
            if let answer { continuation.resume(with: answer) }
        }
    }
}
