import Courier
import Foundation
import ServiceLifecycle
import Testing
import UnixSignals

@testable import courier

/// How the long-running commands run: a ServiceGroup that SIGINT or SIGTERM shuts down gracefully, and a second
/// signal ends at once. The signals are sent to this test process, so the tests stop on SIGUSR1 and SIGUSR2
/// instead: the test process keeps its own SIGINT and SIGTERM.
@Suite("CommandServices: a ServiceGroup stopped by signals", .serialized)
struct CommandServicesTests {
    /// A service that ignores graceful shutdown: only cancellation ends it (a shutdown that hangs).
    struct Stubborn: Service {
        func run() async throws { try await Task.sleep(for: .seconds(3600)) }
    }

    /// A service that records that it was shut down gracefully.
    struct Recording: Service {
        let shutDown: Locked<Bool>
        func run() async throws {
            try? await gracefulShutdown()
            shutDown.withLock { $0 = true }
        }
    }

    static let stopSignals: [UnixSignal] = [.sigusr1, .sigusr2]

    init() {
        // Ignored before any test sends one, so a signal that arrives before the group listens cannot end the run.
        signal(SIGUSR1, SIG_IGN)
        signal(SIGUSR2, SIG_IGN)
    }

    @Test func aSignalShutsDownGracefullyAndASecondStopsAtOnce() async throws {
        let workSawShutdown = Locked(false)
        let run = Task {
            try await CommandServices.run([Stubborn()], stoppingOn: Self.stopSignals) {
                try? await gracefulShutdown()
                workSawShutdown.withLock { $0 = true }
            }
        }
        try await Task.sleep(for: .milliseconds(500))  // the group is listening
        kill(getpid(), SIGUSR1)
        let first = ContinuousClock.now
        while !workSawShutdown.withLock({ $0 }), ContinuousClock.now - first < .seconds(60) {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(workSawShutdown.withLock { $0 }, "the first signal reached the work as a graceful shutdown")
        try await Task.sleep(for: .milliseconds(300))  // the stubborn service holds the group open
        let second = ContinuousClock.now
        kill(getpid(), SIGUSR2)
        await #expect(throws: Interrupted.self) { _ = try await run.value }
        // The stubborn service never stops by itself: what would be wrong is waiting for it, which the suite's time
        // limit ends; a loaded machine may take seconds to get here.
        #expect(ContinuousClock.now - second < .seconds(50), "the second signal ended it")
    }

    @Test func workThatEndsShutsTheOtherServicesDownGracefully() async throws {
        let shutDown = Locked(false)
        let signalled = try await CommandServices.run([Recording(shutDown: shutDown)], stoppingOn: Self.stopSignals) {}
        #expect(!signalled && shutDown.withLock { $0 })
    }

    @Test func whatTheWorkThrowsIsRethrownAfterTheOthersShutDown() async throws {
        struct Failed: Error {}
        let shutDown = Locked(false)
        await #expect(throws: Failed.self) {
            _ = try await CommandServices.run([Recording(shutDown: shutDown)], stoppingOn: Self.stopSignals) {
                throw Failed()
            }
        }
        #expect(shutDown.withLock { $0 })
    }
}
