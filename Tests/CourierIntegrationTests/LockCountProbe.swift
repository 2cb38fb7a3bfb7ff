#if COURIER_LOCK_COUNTS
@testable import Courier
import CourierTesting
import Foundation
import Testing

/// Counts the lock round trips of Courier's own locks per plain GET, by the file that made each lock: the measure
/// behind "lock round trips per plain GET" in the Architecture article, and fails when a plain GET takes more than
/// it. Built only with `COURIER_LOCK_COUNTS=1`
/// (`Scripts/lock-count`).
@Suite struct LockCountProbe {
    @Test func plainGet() async throws {
        let gets = 200
        try await withServerSession { session, _ in
            for _ in 0..<5 { _ = try await session.send(Request<Data>.get("/small")) }  // the first GET's one-time work
            _ = LockCounts.take()
            for _ in 0..<gets { _ = try await session.send(Request<Data>.get("/small")) }
            let counts = LockCounts.take()
            for (file, count) in counts.sorted(by: { $0.key < $1.key }) {
                print("lock-count \(file) \(String(format: "%.2f", Double(count) / Double(gets)))")
            }
            let total = Double(counts.values.reduce(0, +)) / Double(gets)
            print("lock-count total \(String(format: "%.2f", total))")
            // The figure the Architecture article gives: the call's two (its wait installed and taken back), the
            // pool's two (in and out) and the session's one (its state). More is a lock the road did not need.
            #expect(total <= 5, "a plain GET takes \(total) lock round trips, more than the 5 it needs")
        }
    }
}
#endif
