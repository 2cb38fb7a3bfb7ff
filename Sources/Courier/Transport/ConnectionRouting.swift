import Foundation
import Logging
import NIOSSL

/// Decides how a request reaches its server on AsyncHTTPClient, and keeps what that needs: one SwiftNIO SSL
/// configuration per ``TLSPolicy`` (files are read once), and one ``ConnectionRelay`` per server that needs one.
final class ConnectionRouting: Sendable {
    /// How one request is sent.
    enum Route {
        /// AsyncHTTPClient's own connection (through the request's proxy, if any), with this TLS configuration
        /// for the request when the policy is not the default (its connection pool keys on it).
        case direct(TLSConfiguration?)
        /// Plain HTTP over a relay's Unix socket; the relay connects, through a SOCKS5 proxy with credentials if
        /// there is one, and for `https` does TLS and checks the public-key pins.
        case relayed(ConnectionRelay)
    }

    private let logger: Logger
    private let configurations = Locked<[TLSPolicy: TLSConfiguration]>([:])
    private let relays = Locked<(started: [ConnectionRelay.Target: Task<ConnectionRelay, any Error>], isShutDown: Bool)>(([:], false))
    private let warnedHosts = Locked<Set<String>>([])

    init(logger: Logger) {
        self.logger = logger
    }

    /// The route of the usual plain request, which has nothing to decide (`http`, no proxy), or `nil` when
    /// ``route(for:)`` must decide: checked without an async call of its own.
    static func plainRoute(for request: TransportRequest) -> Route? {
        request.proxy == nil && !request.isHTTPS ? .direct(nil) : nil
    }

    /// The route for `request`; throws a typed error when the policy's files cannot be read, or when public-key
    /// pins would have to go through an HTTP proxy.
    nonisolated(nonsending) func route(for request: TransportRequest) async throws -> Route {
        if let plain = Self.plainRoute(for: request) { return plain }
        let isHTTPS = request.isHTTPS
        let host = request.url.host(percentEncoded: false) ?? ""
        if isHTTPS && request.tls.allowsInvalidCertificates { warnOnce(host) }
        let pinsKeys = if isHTTPS, case .publicKeys = request.tls.pinning { true } else { false }
        let socks = request.proxy.flatMap { $0.kind == .socks5 ? $0 : nil }
        if pinsKeys || socks?.credentials != nil {
            if pinsKeys, let proxy = request.proxy, proxy.kind == .http {
                // The relay does not speak CONNECT; going around a configured proxy would be worse than failing.
                throw CourierError(code: .tls, message: "public-key pins for \(host) cannot be checked through the HTTP proxy \(proxy): "
                    + "pin certificates instead (TLSPolicy.pinning = .certificates), use a SOCKS5 proxy, or bypass the proxy for this host")
            }
            let target = ConnectionRelay.Target(host: host, port: request.url.port ?? (isHTTPS ? 443 : 80), tls: isHTTPS ? request.tls : nil,
                                                socks: socks, connectTimeout: request.timeouts.connect)
            return .relayed(try await relay(for: target))
        }
        guard isHTTPS, !request.tls.isStandard else { return .direct(nil) }
        return .direct(try configuration(for: request.tls))
    }

    /// Stops every relay.
    func shutdown() async {
        let started = relays.withLock { relays in
            relays.isShutDown = true
            defer { relays.started = [:] }
            return Array(relays.started.values)
        }
        for task in started { await (try? task.value)?.shutdown() }
    }

    private func configuration(for policy: TLSPolicy) throws -> TLSConfiguration {
        if let known = configurations.withLock({ $0[policy] }) { return known }
        let made = try policy.makeTLSConfiguration()
        configurations.withLock { $0[policy] = made }
        return made
    }

    private func relay(for target: ConnectionRelay.Target) async throws -> ConnectionRelay {
        let logger = self.logger
        let task = try relays.withLock { relays in
            guard !relays.isShutDown else { throw CourierError(code: .sessionClosed, message: "the transport has been shut down") }
            if let task = relays.started[target] { return task }
            let task = Task { try await ConnectionRelay.start(target, logger: logger) }
            relays.started[target] = task
            return task
        }
        do {
            return try await task.value
        } catch {
            _ = relays.withLock { $0.started.removeValue(forKey: target) }  // a later request may succeed (a file fixed)
            throw error
        }
    }

    private func warnOnce(_ host: String) {
        guard warnedHosts.withLock({ $0.insert(host).inserted }) else { return }
        logger.warning("TLS certificate verification is OFF for \(host): allowsInvalidCertificates is set")
    }
}
