import Foundation
import Logging

extension RequestExecutor {
    /// Runs `send`; when ``Configuration/waitsForConnectivity`` is set and the connection could not be made
    /// (nothing was sent), probes the host, or the proxy, until it answers or the wait is over, then runs it again.
    /// With a `canceller` (a request in the pool), the wait runs in a task the canceller can stop: only requests
    /// that meet an unreachable host pay for it.
    nonisolated(nonsending) func waitingForConnectivity<Answer>(_ request: TransportRequest, canceller: Canceller?,
                                                                _ send: nonisolated(nonsending) () async throws -> Answer) async throws -> Answer {
        do {
            return try await send()
        } catch let error as CourierError where [.connectionFailed, .offline].contains(error.code) {
            guard let wait = configuration.waitsForConnectivity, request.body.isReplayable else { throw error }
            let budget = min(wait, Tick.now.duration(to: request.deadlineTick))
            let monitor = request.proxy.map { ReachabilityMonitor(host: $0.host, port: $0.port, interval: .milliseconds(250), probeTimeout: .seconds(1)) }
                ?? ReachabilityMonitor(url: request.url, interval: .milliseconds(250), probeTimeout: .seconds(1))
            configuration.logger.info("waiting up to \(budget) for \(monitor.host):\(monitor.port) to be reachable")
            let probing = Task { budget > .zero ? await monitor.waitUntilReachable(timeout: budget).isReachable : false }
            let stop = TaskCancellable(probing)
            canceller?.install(stop)
            defer { canceller?.remove(stop) }
            let reachable = await withTaskCancellationHandler { await probing.value } onCancel: { probing.cancel() }
            guard reachable else {
                if probing.isCancelled || canceller?.isCancelled == true { throw CourierError.cancelled() }
                throw CourierError(code: .offline, message: "\(monitor.host):\(monitor.port) is still unreachable after waiting \(budget)",
                                   underlying: error)
            }
            return try await send()
        }
    }
}
