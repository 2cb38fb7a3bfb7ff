import Foundation
import Testing
@testable import Courier

/// Which configurations send their requests down the executor's plain path (``SessionSnapshot/isPlain``).
@Suite("The plan of a configuration")
struct SessionPlanTests {
    @Test func onlyAConfigurationWithNoOptionalStepIsPlain() {
        let lean = Configuration { $0.scheduling.coalescesRequests = false }
        #expect(SessionSnapshot(lean).isPlain)
        #expect(!SessionSnapshot(Configuration()).isPlain, "coalescing is on by default")
        let steps: [(String, (inout Configuration) -> Void)] = [
            ("cache", { $0.cache = ResponseCache() }),
            ("retries", { $0.retryPolicy = RetryPolicy(maxAttempts: 2) }),
            ("connectivity", { $0.waitsForConnectivity = .seconds(1) }),
            ("coalescing", { $0.scheduling.coalescesRequests = true }),
        ]
        for (name, turnOn) in steps {
            var configuration = lean
            turnOn(&configuration)
            #expect(!SessionSnapshot(configuration).isPlain, "\(name)")
        }
    }
}
