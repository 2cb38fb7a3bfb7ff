import AsyncHTTPClient
import Benchmark
import Courier
import CourierTesting
import NIOCore

/// `ahc-get-small`: `get-small`'s GET of `/small` through AsyncHTTPClient alone, with the client set up as Courier
/// sets its own up (``AsyncHTTPClientTransport/preparedConfiguration(_:)``, an event loop of its own) and the body
/// collected by AsyncHTTPClient's delegate API on that loop, as Courier collects it. The counts are the whole
/// process's, the server's side of each call included, so `get-small` less these is what Courier itself
/// allocates and retains per call. Its retains swing by about 7 % between samples (AsyncHTTPClient's connection
/// pool takes one of several paths), hence the wider tolerance.
func ahcGetSmallBenchmark() {
    let fixture = LoopbackFixture<HTTPClient> { try? await $0.shutdown() }
    Benchmark("ahc-get-small", configuration: .allocations(tolerance: 10)) { benchmark in
        let (client, server, loop) = try fixture.opened()
        let url = server.baseURL.appending(path: "small").absoluteString
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
        try await fixture.open { _, loop in
            HTTPClient(
                eventLoopGroupProvider: .shared(loop),
                configuration: AsyncHTTPClientTransport.preparedConfiguration(HTTPClient.Configuration())
            )
        }
    } teardown: {
        await fixture.close()
    }
}
