
/// Many requests of one response type, run together with a concurrency bound (YTKNetwork's and HLNetworking's
/// batch requests, RBEFireworks' batch with shouldCancelAllIfOneFailed).
///
/// ```swift
/// let batch = Batch(ids.map { Request<User>.get("/users/\($0)") }, options: BatchOptions(concurrency: 4))
/// Task { for await progress in batch.progress { print(progress) } }
/// let outcome = try await session.run(batch)
/// let users = try outcome.responses.map(\.value)      // throws the first failure, naming its index
/// ```
///
/// Results come back in input order. Cancel with ``cancel()`` or by cancelling the task that runs it.
public final class Batch<Value: Sendable>: Sendable {
    /// The requests, in the order their results come back.
    public let requests: [Request<Value>]
    /// How the batch runs.
    public let options: BatchOptions

    private let broadcaster = EventBroadcaster<BatchProgress>(replaysLatest: true, bufferLimit: 1)
    private let control = Locked<(isCancelled: Bool, cancelRunning: (@Sendable () -> Void)?)>((false, nil))

    /// Creates a batch; run it with ``Session/run(_:)-(Batch<Value>)``.
    public init(_ requests: [Request<Value>], options: BatchOptions = BatchOptions()) {
        self.requests = requests
        self.options = options
        broadcaster.yield(BatchProgress(total: requests.count))
    }

    /// Progress as requests end: the current state first, then each change; a slow reader skips to the latest.
    /// The stream ends when the batch does.
    public var progress: AsyncStream<BatchProgress> { broadcaster.subscribe() }

    /// Cancels every request of the batch still running or waiting; ``Session/run(_:)-(Batch<Value>)`` then throws
    /// ``CourierError/Code/cancelled``.
    public func cancel() {
        let cancel = control.withLock { control in
            control.isCancelled = true
            return control.cancelRunning
        }
        cancel?()
    }

    /// Runs every request through `send`; see ``Session/run(_:)-(Batch<Value>)``.
    func run(_ send: @escaping @Sendable (Request<Value>) async throws -> Response<Value>) async throws -> BatchOutcome<Value> {
        let task = Task { try await self.runGroup(send) }
        let cancelledEarly = control.withLock { control in
            control.cancelRunning = { task.cancel() }
            return control.isCancelled
        }
        if cancelledEarly { task.cancel() }
        return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }

    private func runGroup(_ send: @escaping @Sendable (Request<Value>) async throws -> Response<Value>) async throws -> BatchOutcome<Value> {
        for plugin in options.plugins { plugin.willStart(total: requests.count) }
        var progress = BatchProgress(total: requests.count)
        var results = [Result<Response<Value>, CourierError>?](repeating: nil, count: requests.count)
        defer {
            for plugin in options.plugins { plugin.didFinish(progress) }
            broadcaster.finish()
        }
        await withTaskGroup(of: (Int, Result<Response<Value>, CourierError>).self) { group in
            var next = 0
            func addNext() {
                guard next < requests.count else { return }
                let index = next
                let request = requests[index]
                next += 1
                group.addTask {
                    do { return (index, .success(try await send(request))) } catch {
                        return (index, .failure(RequestExecutor.normalize(error)))
                    }
                }
            }
            for _ in 0..<min(max(1, options.concurrency), requests.count) { addNext() }
            while let (index, result) = await group.next() {
                results[index] = result
                progress.completed += 1
                switch result {
                case .success(let response): progress.bytesReceived += response.body.count
                case .failure(let error):
                    progress.failed += 1
                    if options.mode == .failFast, error.code != .cancelled, !Task.isCancelled {
                        group.cancelAll()
                        next = requests.count  // start nothing more; the rest count as cancelled below
                    }
                }
                broadcaster.yield(progress)
                if !Task.isCancelled { addNext() }
            }
        }
        if Task.isCancelled { throw CourierError.cancelled("the batch was cancelled") }
        let outcome = BatchOutcome(results: results.map { $0 ?? .failure(.cancelled("an earlier request of the batch failed")) })
        progress.completed = progress.total
        progress.failed = outcome.failedIndices.count
        broadcaster.yield(progress)
        return outcome
    }
}

/// The results of a ``Batch``, in input order.
public struct BatchOutcome<Value: Sendable>: Sendable {
    /// One result per request, in input order.
    public let results: [Result<Response<Value>, CourierError>]

    /// Creates an outcome.
    public init(results: [Result<Response<Value>, CourierError>]) {
        self.results = results
    }

    /// Indices of the requests that failed (cancelled ones included).
    public var failedIndices: [Int] {
        results.indices.filter { if case .failure = results[$0] { true } else { false } }
    }

    /// Whether every request succeeded.
    public var allSucceeded: Bool { failedIndices.isEmpty }

    /// Every response in input order; throws ``CourierError/Code/batchFailed`` for the first failure that is not
    /// a cancellation caused by it, naming its index in ``CourierError/step``.
    public var responses: [Response<Value>] {
        get throws {
            let failures = results.enumerated().compactMap { index, result -> (Int, CourierError)? in
                if case .failure(let error) = result { (index, error) } else { nil }
            }
            if let (index, error) = failures.first(where: { $0.1.code != .cancelled }) ?? failures.first {
                throw CourierError.failedStep(.batchFailed, index: index, name: nil, error: error)
            }
            return results.compactMap { try? $0.get() }
        }
    }
}
