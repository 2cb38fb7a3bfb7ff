import AsyncHTTPClient
import Courier
import NIOPosix

/// A contender's client (a session, an HTTP client), made anew before each round.
///
/// On a 2-core machine a contender's rate settled, with its first client, at one level for the whole run and at
/// another, up to half lower or higher, in the next run of the same binary. A client keeps its connections, and
/// whatever state they and their event loops settle into, for its life; that is the likeliest cause, though not
/// pinned down. With one client for the whole run every round measured the same draw, and alternating the
/// contenders could not even it out. A new client per round draws again each round, so the median spans the
/// draws instead of resting on one.
final class RoundClient<Client: Sendable>: Sendable {
    private let current: Locked<Client>
    private let make: @Sendable () -> Client
    private let close: @Sendable (Client) async throws -> Void

    /// A client from `make`, replaced by another from `make` at each ``renew()``; `close` ends each one.
    init(make: @escaping @Sendable () -> Client, close: @escaping @Sendable (Client) async throws -> Void) {
        current = Locked(make())
        self.make = make
        self.close = close
    }

    /// The client of this round.
    var client: Client { current.withLock { $0 } }

    /// Closes this round's client and puts a new one in its place.
    func renew() async throws {
        let fresh = make()
        let old = current.withLock { client in
            defer { client = fresh }
            return client
        }
        try await close(old)
    }

    /// Closes the last client.
    func shutdown() async throws {
        try await close(client)
    }
}

extension RoundClient where Client == Session {
    /// A new Courier session with `configuration` each round.
    static func sessions(_ configuration: Configuration) -> RoundClient<Session> {
        RoundClient(make: { Session(configuration: configuration) }, close: { try await $0.shutdown() })
    }
}

extension RoundClient where Client == HTTPClient {
    /// A new AsyncHTTPClient client with `configuration` each round, on the shared event loops.
    static func httpClients(_ configuration: HTTPClient.Configuration) -> RoundClient<HTTPClient> {
        RoundClient(
            make: { HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration) },
            close: { try await $0.shutdown() }
        )
    }
}
