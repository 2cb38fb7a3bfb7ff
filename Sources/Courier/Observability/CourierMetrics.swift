import CoreMetrics
import HTTPTypes
import NIOConcurrencyHelpers

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Courier's swift-metrics instruments, named as ``TelemetryNames`` lists them (OpenTelemetry's HTTP client
/// conventions, and `courier.` for Courier's own). Without a factory it uses the process's `MetricsSystem` (which
/// does nothing until the application bootstraps a backend, such as Prometheus or OpenTelemetry).
///
/// One value per session configuration (see ``SessionSnapshot``); the instruments it makes are kept and looked up
/// by label and dimensions, so a request does not make new instrument objects each time.
struct CourierMetrics: Sendable {
    private typealias Metric = TelemetryNames.Metric
    private typealias Attribute = TelemetryNames.Attribute

    private let factory: any MetricsFactory
    private let counters = Instruments<Counter>()
    private let timers = Instruments<CoreMetrics.Timer>()
    private let recorders = Instruments<Recorder>()
    private let meters = Instruments<Meter>()

    /// The instruments of `factory`, else of the process's `MetricsSystem`; nil when metrics go nowhere (no
    /// backend bootstrapped), so a call holds none and every record is skipped, not just discarded.
    init?(factory: (any MetricsFactory)?) {
        let chosen = factory ?? MetricsSystem.factory
        guard !(chosen is NOOPMetricsHandler) else { return nil }
        self.factory = chosen
    }

    private func counter(_ label: String, _ dimensions: [(String, String)] = []) -> Counter {
        counters.instrument(InstrumentKey(label: label, dimensions: dimensions)) {
            Counter(label: label, dimensions: dimensions, factory: factory)
        }
    }

    private func histogram(_ label: String, _ dimensions: [(String, String)]) -> Recorder {
        recorders.instrument(InstrumentKey(label: label, dimensions: dimensions)) {
            Recorder(label: label, dimensions: dimensions, aggregate: true, factory: factory)
        }
    }

    /// Records a finished call: its duration, and its body sizes, under its method, server, status and error type.
    func request(
        method: HTTPRequest.Method,
        url: URL?,
        status: HTTPResponse.Status?,
        failure: CourierError?,
        duration: Duration,
        sentBytes: Int64?,
        receivedBytes: Int?
    ) {
        var dimensions = [(Attribute.requestMethod, method.rawValue)]
        if let url, let host = url.host(percentEncoded: false) {
            dimensions.append((Attribute.serverAddress, host))
            dimensions.append((Attribute.serverPort, String(url.effectivePort)))
        }
        if let status { dimensions.append((Attribute.responseStatusCode, String(status.code))) }
        if let errorType = TelemetryNames.errorType(status: status, failure: failure) {
            dimensions.append((Attribute.errorType, errorType))
        }
        timers.instrument(InstrumentKey(label: Metric.requestDuration, dimensions: dimensions)) {
            CoreMetrics.Timer(
                label: Metric.requestDuration,
                dimensions: dimensions,
                preferredDisplayUnit: .seconds,
                factory: factory
            )
        }.recordNanoseconds(duration.clampedNanoseconds)
        if let sentBytes, sentBytes > 0 {
            histogram(Metric.requestBodySize, dimensions).record(sentBytes)
        }
        if let receivedBytes {
            histogram(Metric.responseBodySize, dimensions).record(receivedBytes)
        }
    }

    /// The in-flight and queued gauges of `url`'s server (`server.address`, `server.port`).
    func poolGauges(for url: URL) -> (active: Meter, queued: Meter) {
        let host = url.host(percentEncoded: false) ?? ""
        let dimensions = [
            (Attribute.serverAddress, host),
            (Attribute.serverPort, String(url.effectivePort)),
        ]
        func meter(_ label: String) -> Meter {
            meters.instrument(InstrumentKey(label: label, dimensions: dimensions)) {
                Meter(label: label, dimensions: dimensions, factory: factory)
            }
        }
        return (meter(Metric.activeRequests), meter(Metric.queuedRequests))
    }

    /// The instruments of one connection: the open-connections gauge for each state, and the lifetime timer, under
    /// `dimensions` (the server, the peer, the HTTP version).
    func connectionInstruments(
        _ dimensions: [(String, String)]
    ) -> (idle: Meter, active: Meter, lifetime: CoreMetrics.Timer) {
        func meter(_ state: String) -> Meter {
            let dimensions = dimensions + [(Attribute.httpConnectionState, state)]
            return meters.instrument(InstrumentKey(label: Metric.openConnections, dimensions: dimensions)) {
                Meter(label: Metric.openConnections, dimensions: dimensions, factory: factory)
            }
        }
        let lifetime = timers.instrument(InstrumentKey(label: Metric.connectionDuration, dimensions: dimensions)) {
            CoreMetrics.Timer(
                label: Metric.connectionDuration,
                dimensions: dimensions,
                preferredDisplayUnit: .seconds,
                factory: factory
            )
        }
        return (meter("idle"), meter("active"), lifetime)
    }

    /// Counts a call answered by an identical call in flight instead of a call of its own.
    func coalesced() {
        counter(Metric.coalescedCalls).increment()
    }

    /// Counts a retry.
    func retry(method: HTTPRequest.Method) {
        counter(Metric.retries, [(Attribute.requestMethod, method.rawValue)]).increment()
    }

    /// Counts an answer from the cache (fresh, stale, or revalidated).
    func cacheHit() {
        counter(Metric.cacheHits).increment()
    }

    /// Counts a cacheable request the cache could not answer.
    func cacheMiss() {
        counter(Metric.cacheMisses).increment()
    }

    /// Counts bytes a download wrote.
    func downloaded(_ bytes: Int) {
        counter(Metric.downloadBytes).increment(by: Int64(bytes))
    }
}

/// An instrument's label and dimensions: what makes it the same instrument.
private struct InstrumentKey: Hashable, Sendable {
    let label: String
    let dimensions: [String]

    init(label: String, dimensions: [(String, String)]) {
        self.label = label
        self.dimensions = dimensions.flatMap { [$0.0, $0.1] }
    }
}

/// The instruments of one kind (counters, timers) a ``CourierMetrics`` has made, behind one lock.
private final class Instruments<Instrument: AnyObject & Sendable>: Sendable {
    private let made = Locked<[InstrumentKey: Instrument]>([:])

    /// The instrument for `key`, made by `make` the first time.
    func instrument(_ key: InstrumentKey, make: () -> Instrument) -> Instrument {
        made.withLock { made in
            if let instrument = made[key] { return instrument }
            let instrument = make()
            made[key] = instrument
            return instrument
        }
    }
}
