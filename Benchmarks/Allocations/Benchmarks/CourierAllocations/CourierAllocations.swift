import Benchmark
import Courier
import CourierTesting
import Foundation

/// The calls a server makes most, each measured by its malloc and retain counts per call: counts that do not
/// swing with the machine's load, unlike time. `Thresholds/` holds the counts of record; `.ci/run` fails when a
/// benchmark's p90 rises past them by more than its tolerance (see `README.md` beside this package).
let benchmarks: @Sendable () -> Void = {
    loopbackBenchmark("get-small") { session in
        let response = try await session.send(Request<Data>.get("/small"))
        blackHole(response.value)
        AllocationProbe.allocateExtra()
    }

    loopbackBenchmark("cache-memory-hit", { $0.cache = ResponseCache(memory: MemoryCacheStore(), disk: nil) }) {
        session in
        blackHole(try await session.send(Request<Data>.get("/json", query: ["max-age": "3600"])).value)
    }

    let diskCache = CacheFolder()
    loopbackBenchmark(
        "cache-disk-hit",
        { $0.cache = ResponseCache(memory: nil, disk: try DiskCacheStore(directory: diskCache.url)) },
        teardown: diskCache.remove
    ) { session in
        blackHole(try await session.send(Request<Data>.get("/json", query: ["max-age": "3600"])).value)
    }

    // Two identical calls at once share one exchange: the second waits for the first's answer. The route answers
    // after 5 ms, so the second always finds the first in flight.
    loopbackBenchmark("coalesced-get") { session in
        async let first = session.send(Request<Data>.get("/delay/5", query: ["shared": "1"]))
        async let second = session.send(Request<Data>.get("/delay/5", query: ["shared": "1"]))
        blackHole(try await (first.value, second.value))
    }

    // How many reads a megabyte takes, and so how many chunks and buffers, depends on the machine's load: CI's
    // machine once counted 11 % more objects than this one did for the same commit (2,905 against 2,619 at
    // a832480), hence the wider tolerance.
    loopbackBenchmark("stream-1mib", tolerance: 15) { session in
        let response = try await session.stream(Request<Data>.get("/bytes/1048576"))
        var received = 0
        for try await chunk in response.body { received += chunk.readableBytes }
        guard received == 1 << 20 else { throw BenchmarkFailure.shortBody(received) }
    }

    loopbackBenchmark("json-decode") { session in
        blackHole(try await session.send(Request<Profile>.get("/json")).value)
    }

    // The reference: the same GET through AsyncHTTPClient alone, so get-small's counts less these are Courier's.
    ahcGetSmallBenchmark()

    loopbackBenchmark("batch-100", callsPerSample: 1) { session in
        let outcome = try await session.batch((0..<100).map { Request<Data>.get("/small", query: ["n": .int($0)]) })
        let responses = try outcome.responses  // throws when any call failed
        guard responses.count == 100 else { throw BenchmarkFailure.batchIncomplete(responses.count) }
    }
}

/// What `/json` answers, decoded.
struct Profile: Decodable, Sendable {
    var id: Int
    var name: String
    var served: Int
}

enum BenchmarkFailure: Error {
    case shortBody(Int)
    case batchIncomplete(Int)
}

extension Benchmark.Configuration {
    /// Counts only (time is `courier-bench`'s business): 100 samples, after 10 to warm the connections and caches.
    /// A regression is a p90 more than `tolerance` percent above its threshold; an improvement, one as far below.
    static func allocations(tolerance: Double) -> Self {
        let metrics = [.mallocCountTotal] + RetainCounts.metrics
        return .init(
            metrics: metrics,
            warmupIterations: 10,
            maxDuration: .seconds(20),
            maxIterations: 100,
            thresholds: Dictionary(uniqueKeysWithValues: metrics.map { ($0, .init(relative: [.p90: tolerance])) })
        )
    }
}
