import Benchmark
import Courier
import CourierTesting
import Foundation
import NIOPosix
import Synchronization

/// Registers a benchmark whose every sample is `callsPerSample` runs of `call` on a session talking to an in-process
/// loopback server. The server and the session are made before the first sample (with `configure` applied) and
/// shut down after the last, so only the calls are counted. A p90 more than `tolerance` percent from its threshold
/// is a regression (or an improvement): 5 % by default, as far as a loaded machine moved the counts of these calls.
///
/// Ten calls a sample, not one: a call now and then takes about 70 more retains than the others (the client's and
/// the server's threads met in another order), and over ten calls that is half a percent of the sample, where
/// alone it moved the p90 by 6 %.
func loopbackBenchmark(
    _ name: String,
    callsPerSample: Int = 10,
    tolerance: Double = 5,
    _ configure: @escaping @Sendable (inout Configuration) throws -> Void = { _ in },
    teardown: @escaping @Sendable () -> Void = {},
    call: @escaping @Sendable (Session) async throws -> Void
) {
    let fixture = LoopbackFixture()
    Benchmark(name, configuration: .allocations(tolerance: tolerance)) { benchmark in
        let session = try fixture.session()
        let before = RetainCounts.now
        for _ in 0..<callsPerSample { try await call(session) }
        RetainCounts.now.record(since: before, in: benchmark)
    } setup: {
        try await fixture.open(configure)
    } teardown: {
        await fixture.close()
        teardown()
    }
}

/// The server and session of one benchmark, between its setup and its teardown.
///
/// The session's client runs on an event loop of its own, and the server on SwiftNIO's shared group. Sharing one
/// group, a connection's two ends sometimes met on one thread and sometimes not, and the retains per call took one
/// of two values (about 6 % apart) depending on which, from run to run.
final class LoopbackFixture: Sendable {
    private struct Parts {
        var server: TestServer
        var session: Session
        var clientLoop: MultiThreadedEventLoopGroup
    }

    private let parts = Mutex<Parts?>(nil)

    func open(_ configure: @Sendable (inout Configuration) throws -> Void) async throws {
        let server = try await TestServer.start()
        var configuration = Configuration { $0.baseURL = server.baseURL }
        try configure(&configuration)
        let clientLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let session = Session(
            configuration: configuration,
            transport: AsyncHTTPClientTransport(eventLoopGroup: clientLoop)
        )
        parts.withLock { $0 = Parts(server: server, session: session, clientLoop: clientLoop) }
    }

    func session() throws -> Session {
        guard let session = parts.withLock({ $0?.session }) else { throw FixtureError.notOpen }
        return session
    }

    func close() async {
        guard let parts = parts.withLock({ $0.take() }) else { return }
        try? await parts.session.shutdown()
        await parts.server.shutdown()
        try? await parts.clientLoop.shutdownGracefully()
    }

    enum FixtureError: Error { case notOpen }
}

/// A temporary folder for a disk cache, removed when its benchmark ends.
struct CacheFolder: Sendable {
    let url = FileManager.default.temporaryDirectory.appending(path: "courier-allocations-\(UUID().uuidString)")

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// The gate's own check: with `COURIER_ALLOCATIONS_EXTRA=N` in the environment, `get-small` allocates `N` more
/// objects per call, as a regression would, and `thresholds check` must fail (`Scripts/allocations --self-test`).
enum AllocationProbe {
    static let extra = Int(ProcessInfo.processInfo.environment["COURIER_ALLOCATIONS_EXTRA"] ?? "") ?? 0

    static func allocateExtra() {
        for index in 0..<extra { blackHole(ExtraAllocation(index)) }
    }

    private final class ExtraAllocation {
        let index: Int
        init(_ index: Int) { self.index = index }
    }
}
