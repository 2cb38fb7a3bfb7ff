import Foundation
import Logging

extension RequestExecutor {
    /// Sends `request`; when ``Configuration/waitsForConnectivity`` is set and the connection could not be made
    /// (nothing was sent), probes the host, or the proxy, until it answers or the wait is over, then sends again.
    /// With `callerBoundsBody`, the caller reads the body within the deadline itself (see ``HeadBoundedTransport``).
    nonisolated(nonsending) func sendWaitingForConnectivity(_ request: TransportRequest,
                                                            callerBoundsBody: Bool) async throws -> TransportResponse {
        nonisolated(nonsending) func send() async throws -> TransportResponse {
            if callerBoundsBody, let headBoundedTransport { return try await headBoundedTransport.sendBoundingHead(request) }
            return try await transport.send(request)
        }
        do {
            return try await send()
        } catch let error as CourierError where [.connectionFailed, .offline].contains(error.code) {
            guard let wait = configuration.waitsForConnectivity, request.body.isReplayable else { throw error }
            let budget = min(wait, ContinuousClock.now.duration(to: request.deadline))
            let monitor = request.proxy.map { ReachabilityMonitor(host: $0.host, port: $0.port, interval: .milliseconds(250), probeTimeout: .seconds(1)) }
                ?? ReachabilityMonitor(url: request.url, interval: .milliseconds(250), probeTimeout: .seconds(1))
            configuration.logger.info("waiting up to \(budget) for \(monitor.host):\(monitor.port) to be reachable")
            guard budget > .zero, await monitor.waitUntilReachable(timeout: budget).isReachable else {
                try Task.checkCancellation()
                throw CourierError(code: .offline, message: "\(monitor.host):\(monitor.port) is still unreachable after waiting \(budget)",
                                   underlying: error)
            }
            return try await send()
        }
    }
}
