import Courier
import CourierPostgres
import Foundation

/// The connection pools tests opened with ``FleetDatabase/opened(url:maxConnections:)``, by database.
private let runners = Locked<[ObjectIdentifier: Task<Void, Never>]>([:])

extension FleetDatabase {
    /// A database whose pool runs in a task of its own until ``close()``: for tests that open and close
    /// databases in the middle of what they check, as the processes of a fleet come and go. Code outside tests
    /// runs a database in a `ServiceGroup` or with `withFleetDatabase(url:)`.
    static func opened(url: String, maxConnections: Int = 8) throws -> FleetDatabase {
        let database = try FleetDatabase(url: url, maxConnections: maxConnections)
        runners.withLock { $0[ObjectIdentifier(database)] = Task { await database.run() } }
        return database
    }

    /// Closes every connection of a database from ``opened(url:maxConnections:)`` and waits until they are.
    func close() async {
        guard let runner = runners.withLock({ $0.removeValue(forKey: ObjectIdentifier(self)) }) else { return }
        runner.cancel()
        await runner.value
    }
}
