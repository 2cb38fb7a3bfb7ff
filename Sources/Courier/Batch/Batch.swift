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

    /// A result handed on in input order: its index and how the request ended.
    typealias Delivery = @Sendable (Int, Result<Response<Value>, CourierError>) async -> Void

    /// Runs every request through `send` and collects the results; see ``Session/run(_:)-(Batch<Value>)``.
    func run(
        _ send: @escaping @Sendable (Request<Value>) async throws -> Response<Value>
    ) async throws -> BatchOutcome<Value> {
        let results = Locked<[Result<Response<Value>, CourierError>]>([])
        _ = try await run(send, window: .max) { _, result in results.withLock { $0.append(result) } }
        return BatchOutcome(results: results.withLock { $0 })
    }

    /// Runs every request through `send`, handing each result to `deliver` in input order; see
    /// ``Session/run(_:window:consume:)``.
    func run(
        _ send: @escaping @Sendable (Request<Value>) async throws -> Response<Value>,
        window: Int,
        deliver: @escaping Delivery
    ) async throws -> BatchProgress {
        let task = Task { try await self.runGroup(send, window: window, deliver: deliver) }
        let cancelledEarly = control.withLock { control in
            control.cancelRunning = { task.cancel() }
            return control.isCancelled
        }
        if cancelledEarly { task.cancel() }
        return try await withTaskCancellationHandler {
            try await task.value
        } onCancel: {
            task.cancel()
        }
    }

    /// Runs the batch on `concurrency` workers, each taking the next request as its last one ends: a task per
    /// worker, not per request, and no wake-up of this task per request (see ``BatchLedger``).
    private func runGroup(
        _ send: @escaping @Sendable (Request<Value>) async throws -> Response<Value>,
        window: Int,
        deliver: @escaping Delivery
    ) async throws -> BatchProgress {
        for plugin in options.plugins { plugin.willStart(total: requests.count) }
        let ledger = BatchLedger<Value>(count: requests.count, window: window)
        var final: BatchProgress?
        defer {
            let progress = final ?? ledger.progress
            for plugin in options.plugins { plugin.didFinish(progress) }
            broadcaster.finish()
        }
        let workers = min(max(1, options.concurrency), requests.count)
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<workers {
                group.addTask { await self.work(ledger, send, deliver) }
            }
            // A worker that ends early has stopped the batch on a failure: the rest are cancelled.
            while let stopped = await group.next() {
                if stopped { group.cancelAll() }
            }
        }
        if Task.isCancelled { throw CourierError.cancelled("the batch was cancelled") }
        let (rest, neverStarted) = ledger.remaining()
        for (index, result) in rest { await deliver(index, result) }
        var progress = ledger.progress
        progress.failed += neverStarted
        progress.completed = progress.total
        final = progress
        broadcaster.yield(progress)
        return progress
    }

    /// One worker: sends the next request until none is left, handing on the results that its own completes in
    /// input order; returns `true` when a failure of its own stopped the batch (``BatchOptions/Mode/failFast``).
    private func work(
        _ ledger: BatchLedger<Value>,
        _ send: @Sendable (Request<Value>) async throws -> Response<Value>,
        _ deliver: Delivery
    ) async -> Bool {
        while !Task.isCancelled {
            let index: Int
            switch ledger.take() {
            case .done: return false
            case .wait:
                await ledger.waitForRoom()
                continue
            case .request(let next): index = next
            }
            let result: Result<Response<Value>, CourierError>
            var stops = false
            do { result = .success(try await send(requests[index])) } catch {
                let failure = RequestExecutor.normalize(error)
                stops = options.mode == .failFast && failure.code != .cancelled && !Task.isCancelled
                result = .failure(failure)
            }
            var (stopped, deliveries) = ledger.record(
                result,
                at: index,
                stopOnFailure: stops,
                publish: { broadcaster.yield($0) }
            )
            while !deliveries.isEmpty {
                for (delivered, item) in deliveries { await deliver(delivered, item) }
                deliveries = ledger.nextDeliveries()
            }
            if stopped { return true }
        }
        return false
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
