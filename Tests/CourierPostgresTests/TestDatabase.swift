import Courier
import CourierPostgres
import Foundation
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL server the fleet tests use: `COURIER_POSTGRES_URL` (`Scripts/postgres start DIR` prints one;
/// `.ci/run` starts one and sets it). Without it the suites are skipped, except where `COURIER_REQUIRE_POSTGRES=1`
/// (`.ci/run`), where that fails.
enum TestDatabase {
    /// `nil` when unset or empty: an empty URL given to the CLI as a cache store would name the working directory.
    static let url = ProcessInfo.processInfo.environment["COURIER_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let isAvailable = url != nil

    /// Runs `body` with the URL of a database of its own, created for it and dropped afterwards, so tests run in
    /// parallel without seeing each other's tables.
    static func withFresh<T>(_ body: (String) async throws -> T) async throws -> T {
        guard let url else { throw CourierError(code: .database, message: "COURIER_POSTGRES_URL is not set") }
        let name = "courier_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        let admin = try FleetDatabase.opened(url: url, maxConnections: 1)
        try await admin.run("creating \(name)", within: .seconds(20)) { client in
            try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        }
        let fresh = url.replacingOccurrences(of: #"/[^/?]*(\?|$)"#, with: "/\(name)$1", options: .regularExpression)
        let result: Result<T, any Error>
        do { result = .success(try await body(fresh)) } catch { result = .failure(error) }
        _ = try? await admin.run("dropping \(name)", within: .seconds(20)) { client in
            try await client.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
        }
        await admin.close()
        return try result.get()
    }

    /// Runs `body` with a ``FleetDatabase`` on a fresh database, closed afterwards.
    static func withDatabase<T>(_ body: (FleetDatabase, String) async throws -> T) async throws -> T {
        try await withFresh { url in
            let database = try FleetDatabase.opened(url: url)
            let result: Result<T, any Error>
            do { result = .success(try await body(database, url)) } catch { result = .failure(error) }
            await database.close()
            return try result.get()
        }
    }

    /// Runs `body` with a ``FleetDatabase`` on the database at `url`, closed afterwards.
    static func withConnection<T>(_ url: String, _ body: (FleetDatabase) async throws -> T) async throws -> T {
        let database = try FleetDatabase.opened(url: url, maxConnections: 1)
        let result: Result<T, any Error>
        do { result = .success(try await body(database)) } catch { result = .failure(error) }
        await database.close()
        return try result.get()
    }

    /// Runs one statement on `database`, for a test's own setting up and checking.
    @discardableResult
    static func execute(_ sql: String, on database: FleetDatabase) async throws -> [Int] {
        try await database.run("a test statement", within: .seconds(10)) { client in
            var values: [Int] = []
            for try await value in try await client.query(PostgresQuery(unsafeSQL: sql)).decode(Int.self) {
                values.append(value)
            }
            return values
        }
    }
}

@Suite("The fleet tests' database")
struct TestDatabaseTests {
    /// CI must not skip the fleet suites silently.
    @Test func isThereWhereRequired() {
        if ProcessInfo.processInfo.environment["COURIER_REQUIRE_POSTGRES"] == "1" {
            #expect(TestDatabase.isAvailable, "COURIER_POSTGRES_URL is not set: the PostgreSQL suites were skipped")
            #expect(FleetCLI.isBuiltIn, "built without --traits Postgres: the courier queue tests were skipped")
        }
    }
}
