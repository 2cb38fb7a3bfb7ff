import Benchmark
import Courier
import CourierTesting
import Foundation
import NIOCore
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
    let fixture = LoopbackFixture<Session> { try? await $0.shutdown() }
    Benchmark(name, configuration: .allocations(tolerance: tolerance)) { benchmark in
        let session = try fixture.opened().client
        let before = RetainCounts.now
        for _ in 0..<callsPerSample { try await call(session) }
        RetainCounts.now.record(since: before, in: benchmark)
    } setup: {
        try await fixture.open { server, loop in
            var configuration = Configuration { $0.baseURL = server.baseURL }
            try configure(&configuration)
            return Session(configuration: configuration, transport: AsyncHTTPClientTransport(eventLoopGroup: loop))
        }
    } teardown: {
        await fixture.close()
        teardown()
    }
}

/// The server and the client of one benchmark, between its setup and its teardown: a ``Session`` for Courier's
/// benchmarks, AsyncHTTPClient's own client for the reference (`ahc-get-small`), set up the same way.
///
/// The client runs on an event loop of its own, and the server on SwiftNIO's shared group. Sharing one group, a
/// connection's two ends sometimes met on one thread and sometimes not, and the retains per call took one of two
/// values (about 6 % apart) depending on which, from run to run.
final class LoopbackFixture<Client: Sendable>: Sendable {
    private struct Parts {
        var server: TestServer
        var client: Client
        var clientLoop: MultiThreadedEventLoopGroup
    }

    private let parts = Mutex<Parts?>(nil)
    private let shutdown: @Sendable (Client) async -> Void

    /// A fixture whose client `shutdown` ends.
    init(shutdown: @escaping @Sendable (Client) async -> Void) {
        self.shutdown = shutdown
    }

    /// Starts the server, and the client `make` builds for it on the client's own loop.
    func open(_ make: (TestServer, MultiThreadedEventLoopGroup) throws -> Client) async throws {
        let server = try await TestServer.start()
        let clientLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client: Client
        do { client = try make(server, clientLoop) } catch {
            await server.shutdown()
            try? await clientLoop.shutdownGracefully()
            throw error
        }
        parts.withLock { $0 = Parts(server: server, client: client, clientLoop: clientLoop) }
    }

    /// The client, the server and the client's loop; throws until ``open(_:)`` has run.
    func opened() throws -> (client: Client, server: TestServer, loop: any EventLoop) {
        guard let opened = parts.withLock({ $0.map { ($0.client, $0.server, $0.clientLoop.next()) } }) else {
            throw FixtureError.notOpen
        }
        return opened
    }

    func close() async {
        guard let parts = parts.withLock({ $0.take() }) else { return }
        await shutdown(parts.client)
        await parts.server.shutdown()
        try? await parts.clientLoop.shutdownGracefully()
    }
}

enum FixtureError: Error { case notOpen }

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
