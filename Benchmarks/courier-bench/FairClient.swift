import AsyncHTTPClient
import Courier
import NIOCore

extension HTTPClient.Configuration {
    /// AsyncHTTPClient set up as ``Courier/AsyncHTTPClientTransport`` sets up its own client: no redirects (the
    /// session follows them), no decompression (the session decodes), no silent retry of a refused connection,
    /// no tracing span (the session makes its own), and the same connect and read-idle timeouts. The `ahc`
    /// contender uses it, so a ratio against `ahc` measures Courier's own work and nothing AsyncHTTPClient does for
    /// one and not the other.
    static func likeCourier(_ base: HTTPClient.Configuration = HTTPClient.Configuration()) -> HTTPClient.Configuration {
        var configuration = base
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.tracing.tracer = nil
        // Courier's default connect and read-idle timeouts: with a read timeout, AsyncHTTPClient arms an idle timer
        // for every response, so a contender without one would skip work Courier's client does.
        let timeouts = Timeouts()
        configuration.timeout = .init(connect: TimeAmount(timeouts.connect), read: TimeAmount(timeouts.readIdle))
        return configuration
    }
}
