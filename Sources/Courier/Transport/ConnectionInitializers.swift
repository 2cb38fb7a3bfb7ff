import AsyncHTTPClient
import NIOCore

/// AsyncHTTPClient's connection initialisers (`http1_1ConnectionDebugInitializer` and its HTTP/2 siblings), as
/// Courier puts its own in front of any a caller set.
enum ConnectionInitializers {
    /// One initialiser: it runs once per connection (or HTTP/2 stream), before the connection takes a request.
    typealias Initializer = @Sendable (any Channel) -> EventLoopFuture<Void>

    /// An initialiser that runs `install` on the channel's loop (synchronous pipeline and option operations must
    /// run there), then `next`, the initialiser that was set before.
    static func chaining(
        _ install: @escaping @Sendable (any Channel) throws -> Void,
        before next: Initializer?
    ) -> Initializer {
        { channel in
            let loop = channel.eventLoop
            let installed =
                loop.inEventLoop
                ? loop.makeCompletedFuture(Result { try install(channel) }) : loop.submit { try install(channel) }
            guard let next else { return installed }
            return installed.flatMap { next(channel) }
        }
    }

    /// `configuration` with `install` run on every HTTP/1.1 and every HTTP/2 connection, ahead of the initialisers
    /// set before (which still run, after).
    static func installingOnEveryConnection(
        _ install: @escaping @Sendable (any Channel) throws -> Void,
        on configuration: HTTPClient.Configuration
    ) -> HTTPClient.Configuration {
        var configuration = configuration
        configuration.http1_1ConnectionDebugInitializer = chaining(
            install,
            before: configuration.http1_1ConnectionDebugInitializer
        )
        configuration.http2ConnectionDebugInitializer = chaining(
            install,
            before: configuration.http2ConnectionDebugInitializer
        )
        return configuration
    }
}
