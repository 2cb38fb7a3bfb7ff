import CoreMetrics
import HTTPTypes
import NIOConcurrencyHelpers

/// Courier's swift-metrics instruments. Without a factory it uses the process's `MetricsSystem` (which does
/// nothing until the application bootstraps a backend, such as Prometheus or OpenTelemetry).
///
/// | Label | Kind | Dimensions |
/// | --- | --- | --- |
/// | `courier_requests_total` | counter | `method`, `status` (`2xx`…`5xx`, or `error`) |
/// | `courier_request_duration_seconds` | timer | `method` |
/// | `courier_request_bytes_total` | counter | — (request body bytes sent) |
/// | `courier_response_bytes_total` | counter | — (response body bytes received, after decoding) |
/// | `courier_retries_total` | counter | `method` |
/// | `courier_cache_hits_total`, `courier_cache_misses_total` | counter | — |
/// | `courier_download_bytes_total` | counter | — (bytes written by downloads) |
///
/// One value per session configuration (see ``SessionSnapshot``); the instruments it makes are kept and looked up
/// by label and dimensions, so a request does not make new `Counter` and `Timer` objects each time.
struct CourierMetrics: Sendable {
    /// `nil` when metrics go nowhere (no backend bootstrapped): every call is then skipped, not just discarded.
    private let factory: (any MetricsFactory)?
    private let counters = Instruments<Counter>()
    private let timers = Instruments<Timer>()

    init(factory: (any MetricsFactory)?) {
        let chosen = factory ?? MetricsSystem.factory
        self.factory = chosen is NOOPMetricsHandler ? nil : chosen
    }

    private func counter(_ label: String, _ dimensions: [(String, String)] = [], factory: any MetricsFactory) -> Counter
    {
        counters.instrument(InstrumentKey(label: label, dimensions: dimensions)) {
            Counter(label: label, dimensions: dimensions, factory: factory)
        }
    }

    /// Counts a finished request, its duration and its bytes.
    func request(
        method: HTTPRequest.Method,
        status: HTTPResponse.Status?,
        duration: Duration,
        sentBytes: Int64?,
        receivedBytes: Int?
    ) {
        guard let factory else { return }
        let statusClass = status.map { "\($0.code / 100)xx" } ?? "error"
        counter("courier_requests_total", [("method", method.rawValue), ("status", statusClass)], factory: factory)
            .increment()
        let timerDimensions = [("method", method.rawValue)]
        timers.instrument(InstrumentKey(label: "courier_request_duration_seconds", dimensions: timerDimensions)) {
            Timer(label: "courier_request_duration_seconds", dimensions: timerDimensions, factory: factory)
        }.recordNanoseconds(duration.clampedNanoseconds)
        if let sentBytes, sentBytes > 0 {
            counter("courier_request_bytes_total", factory: factory).increment(by: sentBytes)
        }
        if let receivedBytes, receivedBytes > 0 {
            counter("courier_response_bytes_total", factory: factory).increment(by: Int64(receivedBytes))
        }
    }

    /// Counts a retry.
    func retry(method: HTTPRequest.Method) {
        guard let factory else { return }
        counter("courier_retries_total", [("method", method.rawValue)], factory: factory).increment()
    }

    /// Counts an answer from the cache (fresh, stale, or revalidated).
    func cacheHit() {
        guard let factory else { return }
        counter("courier_cache_hits_total", factory: factory).increment()
    }

    /// Counts a cacheable request the cache could not answer.
    func cacheMiss() {
        guard let factory else { return }
        counter("courier_cache_misses_total", factory: factory).increment()
    }

    /// Counts bytes a download wrote.
    func downloaded(_ bytes: Int) {
        guard let factory else { return }
        counter("courier_download_bytes_total", factory: factory).increment(by: Int64(bytes))
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
    private let made = NIOLockedValueBox<[InstrumentKey: Instrument]>([:])

    /// The instrument for `key`, made by `make` the first time.
    func instrument(_ key: InstrumentKey, make: () -> Instrument) -> Instrument {
        made.withLockedValue { made in
            if let instrument = made[key] { return instrument }
            let instrument = make()
            made[key] = instrument
            return instrument
        }
    }
}
