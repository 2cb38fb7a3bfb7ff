import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension AsyncHTTPClientTransport {
    /// The transport's lanes, one per event loop (see ``AsyncHTTPClientTransport``).
    final class Lanes: Sendable {
        /// The lane an exchange goes through.
        struct Choice {
            /// The index of the lane.
            let index: Int
            /// Whether the lanes share the per-host connection limit (HTTP/1.1, lanes in turn) or this lane has all
            /// of it (a host that may speak HTTP/2, on its own lane).
            let sharesLimit: Bool
            /// Whether the request may go over HTTP/2 (TLS, and the policy allows it), whose one connection to a
            /// host carries every stream on one loop.
            let mayMultiplex: Bool
        }

        private let loops: [any EventLoop]
        private let turn = Atomic<Int>(0)

        init(_ group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
            loops = Array(group.makeIterator())
        }

        var count: Int { loops.count }

        /// The event loop of lane `index`.
        func loop(_ index: Int) -> any EventLoop { loops[index] }

        /// The lane for `request`: one that can only use HTTP/1.1 takes the lanes in turn; one that may use HTTP/2
        /// keeps to its host's lane. (Taking the least busy lane instead, to keep one request at a time on one warm
        /// loop, measured no better.)
        func take(for request: PreparedRequest) -> Choice {
            let mayMultiplex = request.httpVersion == .automatic && request.isHTTPS
            guard loops.count > 1 else { return Choice(index: 0, sharesLimit: false, mayMultiplex: mayMultiplex) }
            if mayMultiplex {
                var hasher = Hasher()
                hasher.combine(request.url.host())
                hasher.combine(request.url.port)
                return Choice(
                    index: Int(UInt(bitPattern: hasher.finalize()) % UInt(loops.count)),
                    sharesLimit: false,
                    mayMultiplex: true
                )
            }
            let next = turn.wrappingAdd(1, ordering: .relaxed).oldValue
            return Choice(
                index: Int(UInt(bitPattern: next) % UInt(loops.count)),
                sharesLimit: true,
                mayMultiplex: false
            )
        }
    }
}

// MARK: - The clients of a lane

/// A transport's clients by key, the few used last kept in front: comparing a key with a few of them costs less
/// than hashing it (two durations, a proxy, a version and a lane), and a session nearly always uses one key per
/// lane. The front is bounded, so a lookup scans at most ``frontLimit`` keys before the dictionary.
struct ClientTable<Key: Hashable, Client> {
    private var byKey: [Key: Client] = [:]
    private var front: [(key: Key, client: Client)] = []
    let frontLimit: Int

    init(frontLimit: Int) {
        self.frontLimit = max(1, frontLimit)
    }

    /// Every client.
    var all: [Client] { Array(byKey.values) }

    /// The client for `key`, made with `make` (and kept) the first time.
    mutating func client(for key: Key, make: () throws -> Client) rethrows -> Client {
        if let hit = front.first(where: { $0.key == key }) { return hit.client }
        let client: Client
        if let known = byKey[key] {
            client = known
        } else {
            client = try make()
            byKey[key] = client
        }
        if front.count == frontLimit { front.removeFirst() }
        front.append((key, client))
        return client
    }

    mutating func removeAll() {
        byKey.removeAll()
        front.removeAll()
    }
}

// MARK: - The route to a server

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

        /// Whether AsyncHTTPClient makes the connection itself.
        var isDirect: Bool {
            if case .direct = self { true } else { false }
        }
    }

    private let logger: Logger
    private let configurations = Locked<[TLSPolicy: TLSConfiguration]>([:])
    private let relays = Locked<
        (started: [ConnectionRelay.Target: Task<ConnectionRelay, any Error>], isShutDown: Bool)
    >(([:], false))
    private let warnedHosts = Locked<Set<String>>([])
    /// Where to connect for a host name instead of resolving it: AsyncHTTPClient's `dnsOverride`, which a relay
    /// follows too.
    private let hostAddresses: [String: String]

    init(logger: Logger, hostAddresses: [String: String] = [:]) {
        self.logger = logger
        self.hostAddresses = hostAddresses
    }

    /// The route of the usual plain request, which has nothing to decide (`http`, no proxy), or `nil` when
    /// ``route(for:)`` must decide: checked without an async call of its own.
    static func plainRoute(for request: PreparedRequest) -> Route? {
        request.proxy == nil && !request.isHTTPS ? .direct(nil) : nil
    }

    /// The route for `request`; throws a typed error when the policy's files cannot be read, or when public-key
    /// pins would have to go through an HTTP proxy.
    nonisolated(nonsending) func route(for request: PreparedRequest) async throws -> Route {
        if let plain = Self.plainRoute(for: request) { return plain }
        let isHTTPS = request.isHTTPS
        let host = request.url.host(percentEncoded: false) ?? ""
        if isHTTPS && request.tls.allowsInvalidCertificates { warnOnce(host) }
        let pinsKeys = if isHTTPS, case .publicKeys = request.tls.pinning { true } else { false }
        let socks = request.proxy.flatMap { $0.kind == .socks5 ? $0 : nil }
        if pinsKeys || socks?.credentials != nil {
            if pinsKeys, let proxy = request.proxy, proxy.kind == .http {
                // The relay does not speak CONNECT; going around a configured proxy would be worse than failing.
                throw CourierError(
                    code: .tls,
                    message: "public-key pins for \(host) cannot be checked through the HTTP proxy \(proxy): "
                        + "pin certificates instead (TLSPolicy.pinning = .certificates), use a SOCKS5 proxy, or bypass the proxy for this host"
                )
            }
            let target = ConnectionRelay.Target(
                host: host,
                port: request.url.port ?? (isHTTPS ? 443 : 80),
                address: hostAddresses[host],
                tls: isHTTPS ? request.tls : nil,
                socks: socks,
                connectTimeout: request.timeouts.connect
            )
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
            guard !relays.isShutDown else {
                throw CourierError(code: .sessionClosed, message: "the transport has been shut down")
            }
            if let task = relays.started[target] { return task }
            let task = Task { try await ConnectionRelay.start(target, logger: logger) }
            relays.started[target] = task
            return task
        }
        do {
            return try await task.value
        } catch {
            // a later request may succeed (a file fixed)
            _ = relays.withLock { $0.started.removeValue(forKey: target) }
            throw error
        }
    }

    private func warnOnce(_ host: String) {
        guard warnedHosts.withLock({ $0.insert(host).inserted }) else { return }
        logger.warning("TLS certificate verification is OFF for \(host): allowsInvalidCertificates is set")
    }
}
