import NIOCore
import Synchronization

/// What Courier learnt about one connection as AsyncHTTPClient opened it: its number, where it leads, whether it is
/// TLS, and when it was ready. Made once per connection, on its loop, by ``ConnectionObserver``; every request the
/// connection carries shares it, so a request holds one reference rather than copies of the addresses.
final class ConnectionRecord: Sendable, Hashable {
    /// The connection's number in this process, counting from 1: HAR's `connection`.
    let id: Int
    /// The peer's IP address and port: the server, or the proxy the connection goes through; `nil` for a Unix socket
    /// (a relayed connection, see ``ConnectionRelay``).
    let remote: ConnectionFacts.Endpoint?
    /// This side's IP address and port.
    let local: ConnectionFacts.Endpoint?
    /// Whether the connection is TLS.
    let isSecure: Bool
    /// The HTTP version it speaks, as OpenTelemetry's `network.protocol.version` spells it: `1.1` or `2`.
    let version: String
    /// When the connection was ready for requests: after the TCP connect, and the TLS handshake when there is one.
    let ready: Tick

    private static let lastID = Atomic<Int>(0)

    init(remote: SocketAddress?, local: SocketAddress?, isSecure: Bool, version: String, ready: Tick) {
        id = Self.lastID.wrappingAdd(1, ordering: .relaxed).newValue
        self.remote = remote.flatMap(ConnectionFacts.Endpoint.init)
        self.local = local.flatMap(ConnectionFacts.Endpoint.init)
        self.isSecure = isSecure
        self.version = version
        self.ready = ready
    }

    init(_ facts: ConnectionFacts) {
        id = facts.id
        remote = facts.remote
        local = facts.local
        isSecure = facts.isSecure
        version = facts.httpVersion.map { String($0.dropFirst("HTTP/".count)) } ?? ""
        ready = Tick(facts.ready)
    }

    static func == (lhs: ConnectionRecord, rhs: ConnectionRecord) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// One request's use of a connection: which connection, whether it had carried a request before, and when the
/// request's head went out on it. What ``Timing`` keeps, and builds ``ConnectionFacts`` from when asked.
struct ConnectionUse: Sendable, Hashable {
    let record: ConnectionRecord
    let isReused: Bool
    /// When the request's head was written to the connection.
    let sent: Tick
    /// How many connections the exchange opened: this one when it is new, and those of the redirects before it
    /// (curl's `num_connects`).
    var opened: Int

    init(record: ConnectionRecord, isReused: Bool, sent: Tick) {
        self.record = record
        self.isReused = isReused
        self.sent = sent
        opened = isReused ? 0 : 1
    }
}

extension ConnectionFacts.Endpoint {
    /// The IP address and port of `address`; `nil` for a Unix socket.
    init?(_ address: SocketAddress) {
        guard let ip = address.ipAddress, let port = address.port else { return nil }
        self.init(address: ip, port: port)
    }
}
