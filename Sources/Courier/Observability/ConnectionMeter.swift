import CoreMetrics

/// One connection in the metrics: counted in `http.client.open_connections` as idle or active while it is open, its
/// lifetime recorded in `http.client.connection.duration` when it closes. Made when its first request names the
/// server; it lives on the connection's loop, touched only there.
final class ConnectionMeter {
    private let idle: Meter
    private let active: Meter
    private let lifetime: CoreMetrics.Timer
    private let ready: Tick
    private var requestsInFlight = 0
    private var isClosed = false

    /// Counts `record`'s connection as open and idle, under its server (`host` and `port`, from the first request),
    /// its peer and its version.
    init(_ metrics: CourierMetrics, record: ConnectionRecord, host: String, port: Int) {
        typealias Attribute = TelemetryNames.Attribute
        var dimensions = [(Attribute.serverAddress, host), (Attribute.serverPort, String(port))]
        if let peer = record.remote { dimensions.append((Attribute.networkPeerAddress, peer.address)) }
        dimensions.append((Attribute.networkProtocolVersion, record.version))
        (idle, active, lifetime) = metrics.connectionInstruments(dimensions)
        ready = record.ready
        idle.increment()
    }

    /// A request went out on the connection.
    func requestStarted() {
        guard !isClosed else { return }
        if requestsInFlight == 0 { move(from: idle, to: active) }
        requestsInFlight += 1
    }

    /// A request's answer ended, or its stream went away without one.
    func requestEnded() {
        guard !isClosed, requestsInFlight > 0 else { return }
        requestsInFlight -= 1
        if requestsInFlight == 0 { move(from: active, to: idle) }
    }

    /// The connection closed: it leaves the gauge, and its lifetime is recorded. Once.
    func closed() {
        guard !isClosed else { return }
        isClosed = true
        (requestsInFlight > 0 ? active : idle).decrement()
        lifetime.recordNanoseconds(ready.duration(to: .now).clampedNanoseconds)
    }

    private func move(from: Meter, to: Meter) {
        from.decrement()
        to.increment()
    }
}
