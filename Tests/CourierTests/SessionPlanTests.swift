import Foundation
import Testing
@testable import Courier

/// Which configurations send their requests down the executor's plain path (``SessionSnapshot/isPlain``).
@Suite("The plan of a configuration")
struct SessionPlanTests {
    @Test func onlyAConfigurationWithNoOptionalStepIsPlain() {
        let lean = Configuration()
        #expect(SessionSnapshot(lean).isPlain, "the default configuration")
        #expect(SessionSnapshot(Configuration { $0.scheduling.coalescesRequests = false }).isPlain, "coalescing is no step of its own")
        let steps: [(String, (inout Configuration) -> Void)] = [
            ("cache", { $0.cache = ResponseCache() }),
            ("retries", { $0.retryPolicy = RetryPolicy(maxAttempts: 2) }),
            ("connectivity", { $0.waitsForConnectivity = .seconds(1) }),
            ("monitors", { $0.monitors = [SilentMonitor()] }),
        ]
        for (name, turnOn) in steps {
            var configuration = lean
            turnOn(&configuration)
            #expect(!SessionSnapshot(configuration).isPlain, "\(name)")
        }
    }
}

/// A monitor that hears everything and does nothing: what turns the monitors step on.
struct SilentMonitor: EventMonitor {}
