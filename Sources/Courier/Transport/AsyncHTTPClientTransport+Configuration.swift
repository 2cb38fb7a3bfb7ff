public import AsyncHTTPClient

/// What ``AsyncHTTPClientTransport`` makes of an `HTTPClient.Configuration` before a client is made from it.
extension AsyncHTTPClientTransport {
    /// `configuration` as this transport needs it: redirects, decompression, connection retries and tracing are
    /// turned off, since the session does all four, with its own limits and retry policy (so a refused connection
    /// fails at once instead of being retried silently until the connect timeout) and its own span per request
    /// (AsyncHTTPClient's would nest a second one, and cost about 10 µs a request even with the no-op tracer); and
    /// every connection gets a guard that fails a response whose status code AsyncHTTPClient 1.37 would trap on, and
    /// reads of up to 256 KiB (SwiftNIO's default is 64 KiB), so a large body takes fewer trips through the pipeline,
    /// and an observer that tells each response which connection carried it (``Timing/connection``).
    /// Make your own `HTTPClient` from it to hand to ``init(client:logger:)``.
    public static func preparedConfiguration(_ configuration: HTTPClient.Configuration) -> HTTPClient.Configuration {
        preparedConfiguration(configuration, metrics: nil)
    }

    /// `configuration` prepared, its connections counted in `metrics` when there are any.
    static func preparedConfiguration(
        _ configuration: HTTPClient.Configuration,
        metrics: CourierMetrics?
    ) -> HTTPClient.Configuration {
        var configuration = configuration
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.tracing.tracer = nil
        let guarded = UnprocessedRequests.installing(on: ResponseStatusGuard.installing(on: configuration))
        return ReceiveBufferSize.installing(on: ConnectionObserver.installing(on: guarded, metrics: metrics))
    }
}
