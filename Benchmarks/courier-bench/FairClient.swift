import AsyncHTTPClient

extension HTTPClient.Configuration {
    /// AsyncHTTPClient set up as ``Courier/AsyncHTTPClientTransport`` sets up its own client: no redirects (the
    /// session follows them), no decompression (the session decodes), no silent retry of a refused connection,
    /// no tracing span (the session makes its own). The `ahc` contender uses it, so a ratio against `ahc`
    /// measures Courier's own work and nothing AsyncHTTPClient does for one and not the other.
    static func likeCourier(_ base: HTTPClient.Configuration = HTTPClient.Configuration()) -> HTTPClient.Configuration {
        var configuration = base
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.tracing.tracer = nil
        return configuration
    }
}
