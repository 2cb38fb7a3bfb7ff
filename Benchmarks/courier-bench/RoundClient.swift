import Courier

/// A contender's client (a session, an HTTP client), made anew before each round.
///
/// A client's connections settle on the event loops in one arrangement and keep it for the client's life. On a
/// 2-core machine that arrangement alone moved a contender's rate by up to half from one process run to the
/// next, while staying put within a run: with one client for the whole run, every round measured the same
/// draw, and the alternation of contenders could not even it out. A new client per round draws again each
/// round, so the median spans the arrangements instead of resting on one.
final class RoundClient<Client: Sendable>: Sendable {
    private let current: Locked<Client>
    private let make: @Sendable () throws -> Client
    private let close: @Sendable (Client) async throws -> Void

    /// A client from `make`, replaced by another from `make` at each ``renew()``; `close` ends each one.
    init(make: @escaping @Sendable () throws -> Client, close: @escaping @Sendable (Client) async throws -> Void) throws {
        current = Locked(try make())
        self.make = make
        self.close = close
    }

    /// The client of this round.
    var client: Client { current.withLock { $0 } }

    /// Closes this round's client and puts a new one in its place.
    func renew() async throws {
        let fresh = try make()
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
