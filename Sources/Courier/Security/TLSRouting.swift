import Foundation
import Logging
import NIOSSL
import Synchronization

/// Decides how an `https` request's ``TLSPolicy`` is enforced on AsyncHTTPClient, and keeps what that needs:
/// one SwiftNIO SSL configuration per policy (files are read once), and one ``PinningBridge`` per pinned server.
final class TLSRouting: Sendable {
    /// How one request is sent.
    enum Route {
        /// AsyncHTTPClient's own TLS, with the client's default configuration.
        case standard
        /// AsyncHTTPClient's own TLS, with this configuration for the request (its connection pool keys on it).
        case configured(TLSConfiguration)
        /// Plain HTTP over the bridge's Unix socket; the bridge does TLS and checks the public-key pins.
        case bridged(PinningBridge)
    }

    private let logger: Logger
    private let configurations = Mutex<[TLSPolicy: TLSConfiguration]>([:])
    private let bridges = Mutex<(started: [PinningBridge.Target: Task<PinningBridge, any Error>], isShutDown: Bool)>(([:], false))
    private let warnedHosts = Mutex<Set<String>>([])

    init(logger: Logger) {
        self.logger = logger
    }

    /// The route for `request`; throws a typed error when the policy's files cannot be read.
    func route(for request: TransportRequest) async throws -> Route {
        guard request.url.scheme?.lowercased() == "https", !request.tls.isStandard else { return .standard }
        let host = request.url.host(percentEncoded: false) ?? ""
        if request.tls.allowsInvalidCertificates { warnOnce(host) }
        guard case .publicKeys = request.tls.pinning else { return .configured(try configuration(for: request.tls)) }
        if let proxy = request.proxy {
            // The relay connects directly; going around a configured proxy would be worse than failing.
            throw CourierError(code: .tls, message: "public-key pins for \(host) cannot be checked through the proxy \(proxy): "
                + "pin certificates instead (TLSPolicy.pinning = .certificates), or bypass the proxy for this host")
        }
        let target = PinningBridge.Target(host: host, port: request.url.port ?? 443, policy: request.tls,
                                          connectTimeout: request.timeouts.connect)
        return .bridged(try await bridge(for: target))
    }

    /// Stops every bridge.
    func shutdown() async {
        let started = bridges.withLock { bridges in
            bridges.isShutDown = true
            defer { bridges.started = [:] }
            return Array(bridges.started.values)
        }
        for task in started { await (try? task.value)?.shutdown() }
    }

    private func configuration(for policy: TLSPolicy) throws -> TLSConfiguration {
        if let known = configurations.withLock({ $0[policy] }) { return known }
        let made = try policy.makeTLSConfiguration()
        configurations.withLock { $0[policy] = made }
        return made
    }

    private func bridge(for target: PinningBridge.Target) async throws -> PinningBridge {
        let logger = self.logger
        let task = try bridges.withLock { bridges in
            guard !bridges.isShutDown else { throw CourierError(code: .sessionClosed, message: "the transport has been shut down") }
            if let task = bridges.started[target] { return task }
            let task = Task { try await PinningBridge.start(target, logger: logger) }
            bridges.started[target] = task
            return task
        }
        do {
            return try await task.value
        } catch {
            _ = bridges.withLock { $0.started.removeValue(forKey: target) }  // a later request may succeed (a file fixed)
            throw error
        }
    }

    private func warnOnce(_ host: String) {
        guard warnedHosts.withLock({ $0.insert(host).inserted }) else { return }
        logger.warning("TLS certificate verification is OFF for \(host): allowsInvalidCertificates is set")
    }
}
