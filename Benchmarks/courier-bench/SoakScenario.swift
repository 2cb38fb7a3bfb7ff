import Courier
import Foundation

extension Scenario {
    /// `soak`: 100,000 requests (2,000 with `--quick`) through one session, 64 at a time, in a random mix:
    /// distinct GETs, identical GETs of a slow endpoint that coalesce, GETs answered from the memory cache, and
    /// GETs cancelled at a random moment. RSS is read once the first 10 % are done (the warm-up) and again at
    /// the end; the target is a drift within 10 % and an empty pool. Courier only: there is nothing to compare.
    static let soak = Scenario(name: "soak") { target, plan in
        let total = plan.isQuick ? 2_000 : 100_000
        let session = Session(
            configuration: Configuration {
                $0.validators = []
                $0.cache = ResponseCache(memory: MemoryCacheStore(maxBytes: 4 << 20, maxCount: 200))
            }
        )
        let soak = Soak(total: total, warmup: total / 10)
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    while let index = soak.next() {
                        try await Soak.request(index, base: target.base, session: session)
                        soak.finished()
                    }
                }
            }
            try await group.waitForAll()
        }
        let seconds = start.duration(to: .now).seconds
        let poolLeft = await session.pool.count
        try await session.shutdown()

        let warm = soak.rssAfterWarmup ?? 0
        let end = MemoryUse.currentMiB() ?? 0
        let drift = warm > 0 ? (end - warm) / warm * 100 : 0
        let counts = soak.counts
        return ScenarioResult(
            name: "soak",
            unit: "req/s",
            higherIsBetter: true,
            results: ["courier": Double(total) / seconds],
            metrics: [
                "rss_mib": ["after_warmup": warm, "end": end], "rss_drift_pct": ["courier": drift],
                "pool_left": ["courier": Double(poolLeft)],
            ],
            notes: String(
                format:
                    "%d requests, 64 in flight: %d distinct, %d coalesced, %d cached, %d cancelled at random; RSS %.1f MiB after warm-up, %.1f MiB at the end, drift %+.1f%% (target within 10%%); pool left %d (target 0)",
                total,
                counts[0],
                counts[1],
                counts[2],
                counts[3],
                warm,
                end,
                drift,
                poolLeft
            )
        )
    }
}

/// The soak's shared state: which request is next, how many of each kind ran, and the RSS after warm-up.
final class Soak: Sendable {
    private struct State {
        var next = 0
        var done = 0
        var rssAfterWarmup: Double?
        var counts = [0, 0, 0, 0]
    }

    let total: Int
    let warmup: Int
    private let state = Locked(State())

    init(total: Int, warmup: Int) {
        self.total = total
        self.warmup = warmup
    }

    /// The next request's index, or `nil` when all have been handed out.
    func next() -> Int? {
        state.withLock { state in
            guard state.next < total else { return nil }
            defer { state.next += 1 }
            state.counts[Self.kind(state.next)] += 1
            return state.next
        }
    }

    /// Counts a finished request; the one that completes the warm-up reads the RSS.
    func finished() {
        let isWarm = state.withLock { state in
            state.done += 1
            return state.done == warmup
        }
        if isWarm, let rss = MemoryUse.currentMiB() { state.withLock { $0.rssAfterWarmup = rss } }
    }

    var rssAfterWarmup: Double? { state.withLock { $0.rssAfterWarmup } }
    var counts: [Int] { state.withLock { $0.counts } }

    /// 0 distinct, 1 coalesced, 2 cached, 3 cancelled: 50 %, 20 %, 20 %, 10 %, spread evenly.
    static func kind(_ index: Int) -> Int {
        switch index % 10 {
        case 0..<5: 0
        case 5, 6: 1
        case 7, 8: 2
        default: 3
        }
    }

    /// Sends request `index` as its kind says and checks the answer.
    static func request(_ index: Int, base: URL, session: Session) async throws {
        let small = base.appending(path: "small").absoluteString
        switch kind(index) {
        case 0:
            try check(try await session.send(Request<Data>.get(small, query: ["i": .int(index)])).body)
        case 1:
            // Eight slow URLs: whatever is in flight for one of them is shared.
            let slow = base.appending(path: "delay/5").absoluteString
            try check(try await session.send(Request<Data>.get(slow, query: ["k": .int(index % 8)])).body)
        case 2:
            var request = Request<Data>.get(small, query: ["c": .int(index % 50)])
            request.cachePolicy = .cacheElseNetwork()
            try check(try await session.send(request).body)
        default:
            let slow = base.appending(path: "delay/20").absoluteString
            let call = Task { try await session.send(Request<Data>.get(slow, query: ["i": .int(index)])) }
            try await Task.sleep(for: .microseconds(Int.random(in: 0...25_000)))
            call.cancel()
            do {
                try check(try await call.value.body)
            } catch let error as CourierError where error.code == .cancelled {
                // the expected end of most of them
            }
        }
    }

    private static func check(_ body: Data) throws {
        guard body.count == 1024 else { throw BenchError.unexpected("soak got \(body.count) bytes") }
    }
}
