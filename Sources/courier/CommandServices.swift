import Logging
import ServiceLifecycle
import UnixSignals

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How the long-running commands (`serve`, `download`, `queue work`, `reachability --watch`) run: their parts as
/// swift-service-lifecycle services in one `ServiceGroup`, the command's own work last. SIGINT or SIGTERM shuts
/// the group down gracefully, last service first (the work, then what it uses: a worker hands its jobs back
/// before its session and database close); a second signal cancels everything at once. Nothing calls `exit`.
enum CommandServices {
    /// Runs `services` (in the order they depend on each other: a session before what sends through it) with
    /// `work` after them. When `work` returns or throws, the others shut down gracefully too. Returns whether a
    /// signal stopped the command; rethrows what `work` threw, or ``Interrupted`` after a second signal.
    static func run(
        _ services: [any Service],
        stoppingOn stopSignals: [UnixSignal] = [.sigint, .sigterm],
        work: @escaping @Sendable () async throws -> Void
    ) async throws -> Bool {
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) } + [
                    ServiceGroupConfiguration.ServiceConfiguration(
                        service: ClosureService(work),
                        successTerminationBehavior: .gracefullyShutdownGroup,
                        failureTerminationBehavior: .gracefullyShutdownGroup
                    )
                ],
                logger: logger
            )
        )
        // Ignored by the process, so only the sequence's dispatch sources see them (Darwin's sequence does this
        // itself; on Linux an unhandled SIGTERM would still end the process).
        for stopSignal in stopSignals { signal(stopSignal.rawValue, SIG_IGN) }
        let signals = await UnixSignalsSequence(trapping: stopSignals)
        return try await withThrowingTaskGroup(of: Bool.self) { tasks in
            tasks.addTask {
                try await group.run()
                return false
            }
            tasks.addTask {
                var count = 0
                for await signal in signals {
                    count += 1
                    guard count == 1 else { throw Interrupted(detail: "a second \(signal): stopped at once") }
                    Output.stderr("courier: stopping on \(signal); a second signal stops at once")
                    await group.triggerGracefulShutdown()
                }
                return count > 0  // the sequence ends when its task is cancelled: the group had finished
            }
            defer { tasks.cancelAll() }
            var signalled = false
            while let finished = try await tasks.next() {
                signalled = signalled || finished
                tasks.cancelAll()  // the group is done: stop listening for signals
            }
            return signalled
        }
    }

    /// The group's own messages (a service that failed) go to standard error, at warning and above.
    private static let logger: Logger = {
        var logger = Logger(label: "courier.services") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        return logger
    }()
}
