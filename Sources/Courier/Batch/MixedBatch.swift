/// Requests whose answers have different types, run together as a ``Batch`` is (HLNetworking and RBEFireworks
/// mix APIs in one batch): a concurrency bound, collect-all or fail-fast, progress and a cancel handle, and each
/// result back with its own type, in order.
///
/// ```swift
/// let batch = MixedBatch(Request<User>.get("/users/1"), Request<Data>.get("/feed"))   // collect-all by default
/// Task { for await progress in batch.progress { print(progress) } }
/// let (user, feed) = try await session.run(batch)
/// print(try user.get().value, (try? feed.get())?.body.count ?? 0)
/// ```
///
/// It runs as a ``Batch`` of the same requests does; cancel it with ``cancel()`` or by cancelling the task that
/// runs it.
public final class MixedBatch<each Value: Sendable>: Sendable {
    /// How the batch runs; ``BatchOptions/Mode/collectAll`` unless told otherwise, as the seeds' batches do.
    public var options: BatchOptions { batch.options }
    let requests: (repeat Request<each Value>)
    /// The same requests with their types erased: what runs.
    let batch: Batch<DecodedValue>

    /// Creates a batch of `requests`; run it with ``Session/run(_:)->(_,_)``.
    public init(_ requests: repeat Request<each Value>, options: BatchOptions = BatchOptions()) {
        self.requests = (repeat each requests)
        var erased: [ErasedRequest] = []
        for request in repeat each requests { erased.append(request.erased) }
        batch = Batch(erased, options: options)
    }

    /// Progress as requests end: the current state first, then each change. The stream ends when the batch does.
    public var progress: AsyncStream<BatchProgress> { batch.progress }

    /// Cancels every request still running or waiting; the run then throws ``CourierError/Code/cancelled``.
    public func cancel() { batch.cancel() }
}

extension Session {
    /// Runs `batch` and returns each request's result with its own type, in order: a failure is in its result
    /// (with ``BatchOptions/Mode/failFast``, the first one cancels the rest, which fail as cancelled).
    ///
    /// Throws only ``CourierError/Code/cancelled``, when the batch or the calling task is cancelled.
    public nonisolated func run<each Value: Sendable>(
        _ batch: MixedBatch<repeat each Value>
    ) async throws -> (repeat Result<Response<each Value>, CourierError>) {
        let executor = try executor()
        let outcome = try await batch.batch.run { try await executor.run($0) }
        var results = outcome.results[...]
        func next<T: Sendable>(_ request: Request<T>) -> Result<Response<T>, CourierError> {
            guard let result = results.popFirst() else { preconditionFailure("a batch member without a result") }
            return result.map { $0.unerased(as: T.self) }
        }
        return (repeat next(each batch.requests))
    }

    /// Sends requests whose answers have different types at once, and returns their responses in order, each with
    /// its own type: the fail-fast shorthand of a ``MixedBatch``.
    ///
    /// ```swift
    /// let (user, feed) = try await session.batch(Request<User>.get("/users/1"), Request<Data>.get("/feed"))
    /// print(user.value, feed.body.count)
    /// ```
    ///
    /// All run at once; the first to fail cancels the others and is thrown as ``CourierError/Code/batchFailed``,
    /// with ``CourierError/step`` its position and ``CourierError/underlying`` its error. For every result, a
    /// concurrency bound, progress or a cancel handle, run a ``MixedBatch``.
    public nonisolated func batch<each Value: Sendable>(
        _ requests: repeat Request<each Value>
    ) async throws -> (repeat Response<each Value>) {
        var count = 0
        for _ in repeat each requests { count += 1 }
        let mixed = MixedBatch(repeat each requests, options: BatchOptions(concurrency: max(1, count), mode: .failFast))
        let results = try await run(mixed)
        // The failure that stopped the batch, not the cancellations it caused in the others.
        var index = 0
        for result in repeat each results {
            if case .failure(let error) = result, error.code != .cancelled {
                throw CourierError.failedStep(.batchFailed, index: index, name: nil, error: error)
            }
            index += 1
        }
        return (repeat try (each results).get())
    }
}
