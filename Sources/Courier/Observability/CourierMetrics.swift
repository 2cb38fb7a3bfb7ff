import CoreMetrics
import HTTPTypes

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
struct CourierMetrics: Sendable {
    /// `nil` when metrics go nowhere (no backend bootstrapped): every call is then skipped, not just discarded.
    private let factory: (any MetricsFactory)?

    init(factory: (any MetricsFactory)?) {
        let chosen = factory ?? MetricsSystem.factory
        self.factory = chosen is NOOPMetricsHandler ? nil : chosen
    }

    /// Counts a finished request, its duration and its bytes.
    func request(method: HTTPRequest.Method, status: HTTPResponse.Status?, duration: Duration, sentBytes: Int64?, receivedBytes: Int?) {
        guard let factory else { return }
        let statusClass = status.map { "\($0.code / 100)xx" } ?? "error"
        Counter(label: "courier_requests_total", dimensions: [("method", method.rawValue), ("status", statusClass)], factory: factory)
            .increment()
        Timer(label: "courier_request_duration_seconds", dimensions: [("method", method.rawValue)], factory: factory)
            .recordNanoseconds(duration.clampedNanoseconds)
        if let sentBytes, sentBytes > 0 { Counter(label: "courier_request_bytes_total", factory: factory).increment(by: sentBytes) }
        if let receivedBytes, receivedBytes > 0 {
            Counter(label: "courier_response_bytes_total", factory: factory).increment(by: Int64(receivedBytes))
        }
    }

    /// Counts a retry.
    func retry(method: HTTPRequest.Method) {
        guard let factory else { return }
        Counter(label: "courier_retries_total", dimensions: [("method", method.rawValue)], factory: factory).increment()
    }

    /// Counts an answer from the cache (fresh, stale, or revalidated).
    func cacheHit() {
        guard let factory else { return }
        Counter(label: "courier_cache_hits_total", factory: factory).increment()
    }

    /// Counts a cacheable request the cache could not answer.
    func cacheMiss() {
        guard let factory else { return }
        Counter(label: "courier_cache_misses_total", factory: factory).increment()
    }

    /// Counts bytes a download wrote.
    func downloaded(_ bytes: Int) {
        guard let factory else { return }
        Counter(label: "courier_download_bytes_total", factory: factory).increment(by: Int64(bytes))
    }
}
