import Dispatch

extension Session {
    /// Sends `request` and blocks the calling thread until it finishes (the seeds' synchronous requests).
    ///
    /// - Important: Call this only from a thread you own (a `Thread`, a `DispatchQueue`, `main` in a tool that is not
    ///   async). Calling it from inside Swift concurrency blocks one of the few cooperative threads and can deadlock
    ///   the process; from async code, `await` ``send(_:)`` instead.
    public nonisolated func sendBlocking<Value>(_ request: Request<Value>) throws -> Response<Value> {
        let outcome = BlockingOutcome<Response<Value>>()
        Task {
            let result: Result<Response<Value>, any Error>
            do { result = .success(try await self.send(request)) } catch { result = .failure(error) }
            outcome.finish(result)
        }
        return try outcome.wait()
    }
}

/// A result handed from a task to a blocked thread.
private final class BlockingOutcome<Value: Sendable>: Sendable {
    private let result = Locked<Result<Value, any Error>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func finish(_ value: Result<Value, any Error>) {
        result.withLock { $0 = value }
        done.signal()
    }

    func wait() throws -> Value {
        done.wait()
        guard let value = result.withLock({ $0 }) else {
            throw CourierError(code: .transport, message: "the request ended without a result")
        }
        return try value.get()
    }
}
