public import ServiceLifecycle

// The long-lived parts of Courier as swift-service-lifecycle services, so a server runs them in its
// `ServiceGroup` beside its other services: each `run()` lives until the group shuts down gracefully, then
// finishes its work or hands it back, and ends promptly when its task is cancelled.

extension Session: Service {
    /// Serves requests until graceful shutdown, then lets the requests in flight finish (``RequestPool/drain()``)
    /// and shuts the transport down, so later requests fail with ``CourierError/Code/sessionClosed``. Cancelling
    /// the task instead (or during the drain) cancels the requests in flight at once.
    ///
    /// Run it in a `ServiceGroup` instead of calling ``shutdown()`` yourself; list it before the services that send
    /// requests through it, since a group shuts its services down last to first.
    public nonisolated func run() async throws {
        let pool = pool
        if (try? await gracefulShutdown()) != nil {
            await withTaskCancellationHandler {
                _ = await pool.drain()
            } onCancel: {
                Task { await pool.cancelAll() }
            }
        }
        if Task.isCancelled { _ = await pool.cancelAll() }
        try await shutdown()
    }
}

extension DownloadManager: Service {
    /// Lives until graceful shutdown or cancellation, then pauses every download, which writes its resume record
    /// and keeps its partial file, so a manager with a ``Configuration/stateDirectory`` continues them after a
    /// restart (``restore(resuming:)``).
    public nonisolated func run() async throws {
        try? await gracefulShutdown()
        _ = try await pause(.all)
    }
}

extension ReachabilityMonitor: Service {
    /// Probes every ``interval`` (``start()``) until graceful shutdown or cancellation, then stops, which ends every
    /// update stream.
    public nonisolated func run() async throws {
        await start()
        try? await gracefulShutdown()
        await stop()
    }
}
