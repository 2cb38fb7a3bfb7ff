import Courier

/// Runs an operation with a time limit that holds even when the operation ignores cancellation (a database
/// that stopped answering mid-query): at the limit the caller goes on with `timedOut()`'s error, and the
/// operation is cancelled and left to end in the background.
enum Bounded {
    static func run<Value: Sendable>(
        within limit: Duration,
        timedOut: @escaping @Sendable () -> any Error,
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let settlement = Settlement<Value>()
        let work = Task { try await operation() }
        let timer = Task {
            try? await Task.sleep(for: limit)
            if !Task.isCancelled { settlement.settle(.failure(timedOut())) }
        }
        Task { settlement.settle(await work.result) }
        defer {
            timer.cancel()
            work.cancel()  // a no-op when it finished; at the limit it tells the operation to stop
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { settlement.wait(with: $0) }
        } onCancel: {
            settlement.settle(.failure(CancellationError()))
        }
    }

    /// The first result wins; later ones are dropped.
    private final class Settlement<Value: Sendable>: Sendable {
        private enum State {
            case waiting(CheckedContinuation<Value, any Error>?)
            case settled(Result<Value, any Error>)
        }

        private let state = Locked<State>(.waiting(nil))

        func wait(with continuation: CheckedContinuation<Value, any Error>) {
            let settled: Result<Value, any Error>? = state.withLock { state in
                switch state {
                case .waiting:
                    state = .waiting(continuation)
                    return nil
                case .settled(let result):
                    return result
                }
            }
            if let settled { continuation.resume(with: settled) }
        }

        func settle(_ result: Result<Value, any Error>) {
            let waiter: CheckedContinuation<Value, any Error>?? = state.withLock { state in
                guard case .waiting(let continuation) = state else { return nil }
                state = .settled(result)
                return .some(continuation)
            }
            if case .some(.some(let continuation)) = waiter { continuation.resume(with: result) }
        }
    }
}
