package import Courier
import Crypto
package import Foundation
import Testing

/// Runs `body` expecting a ``CourierError`` and returns it; records an issue when `body` succeeds or throws
/// something else.
package func courierError(_ body: () async throws -> Void) async -> CourierError? {
    do {
        try await body()
        Issue.record("expected an error, got success")
        return nil
    } catch let error as CourierError {
        return error
    } catch {
        Issue.record("expected a CourierError, got \(error)")
        return nil
    }
}

/// Waits (bounded by `limit`, polling every 10 ms) until `condition` holds; records an issue naming `what` when it
/// never does.
package func eventually(
    _ what: String,
    within limit: Duration = .seconds(20),
    _ condition: () async throws -> Bool
) async rethrows {
    let end = ContinuousClock.now + limit
    while ContinuousClock.now < end {
        if try await condition() { return }
        try? await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("timed out waiting until \(what)")
}

/// The SHA-256 of some bytes, in lowercase hex.
package func sha256Hex(_ data: Data) -> String { Hex.string(SHA256.hash(data: data)) }
