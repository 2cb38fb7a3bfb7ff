import AsyncHTTPClient
import Benchmark
import Courier
import CourierTesting
import NIOCore
import NIOPosix
import Synchronization

/// `ahc-get-small`: `get-small`'s GET of `/small` through AsyncHTTPClient alone, with the client set up as Courier
/// sets its own up (``AsyncHTTPClientTransport/preparedConfiguration(_:)``, an event loop of its own) and the body
/// collected by AsyncHTTPClient's delegate API on that loop, as Courier collects it. The counts are the whole
/// process's, the server's side of each call included, so `get-small` less these is what Courier itself
/// allocates and retains per call. Its retains swing by about 7 % between samples (AsyncHTTPClient's connection
/// pool takes one of several paths), hence the wider tolerance.
func ahcGetSmallBenchmark() {
    let fixture = ReferenceFixture()
    Benchmark("ahc-get-small", configuration: .allocations(tolerance: 10)) { benchmark in
        let (client, url, loop) = try fixture.parts()
        let before = RetainCounts.now
        for _ in 0..<10 {
            let request = try HTTPClient.Request(url: url)
            let task = client.execute(
                request: request,
                delegate: ResponseAccumulator(request: request),
                eventLoop: .delegate(on: loop)
            )
            blackHole(try await task.futureResult.get().body)
        }
        RetainCounts.now.record(since: before, in: benchmark)
    } setup: {
        try await fixture.open()
    } teardown: {
        await fixture.close()
    }
}

/// The server and AsyncHTTPClient client of `ahc-get-small`, between its setup and its teardown.
final class ReferenceFixture: Sendable {
    private struct Parts {
        var server: TestServer
        var client: HTTPClient
        var clientLoop: MultiThreadedEventLoopGroup
    }

    private let stored = Mutex<Parts?>(nil)

    func open() async throws {
        let server = try await TestServer.start()
        let clientLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let client = HTTPClient(
            eventLoopGroupProvider: .shared(clientLoop),
            configuration: AsyncHTTPClientTransport.preparedConfiguration(HTTPClient.Configuration())
        )
        stored.withLock { $0 = Parts(server: server, client: client, clientLoop: clientLoop) }
    }

    func parts() throws -> (client: HTTPClient, url: String, loop: any EventLoop) {
        guard let parts = stored.withLock({ $0.map { ($0.client, $0.server.baseURL, $0.clientLoop.next()) } }) else {
            throw LoopbackFixture.FixtureError.notOpen
        }
        return (parts.0, parts.1.appending(path: "small").absoluteString, parts.2)
    }

    func close() async {
        guard let parts = stored.withLock({ $0.take() }) else { return }
        try? await parts.client.shutdown()
        await parts.server.shutdown()
        try? await parts.clientLoop.shutdownGracefully()
    }
}
