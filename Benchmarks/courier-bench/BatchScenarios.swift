import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOPosix

/// Where a scenario sends its requests, and the in-process server when there is one (for its hit counts).
struct BenchTarget: Sendable {
    let base: URL
    let server: BenchServer?
}

extension Scenario {
    /// `batch-10k`: 10,000 GETs of 1 KiB (distinct URLs, so nothing is shared) with 256 in flight: Courier's
    /// batch API against a plain task group over raw AsyncHTTPClient. Also Courier's peak RSS.
    static let batch10k = Scenario(name: "batch-10k") { target, plan in
        let count = plan.rounds > 1 ? 10_000 : 500
        let urls = (0..<count).map { target.base.appending(path: "small").absoluteString + "?i=\($0)" }
        let sessions = RoundClient.sessions(Configuration { $0.validators = [] })
        let clients = RoundClient.httpClients(.likeCourier())
        let defaultClients = RoundClient.httpClients(HTTPClient.Configuration())
        let requests = urls.map { Request<Data>.get($0) }
        var peak: [String: Double] = [:]
        var cpu: [String: [Double]] = [:]
        /// Raw AsyncHTTPClient in a plain task group, 256 in flight.
        func ahc(_ name: String, _ clients: RoundClient<HTTPClient>) -> FixedWork {
            FixedWork(name: name, renew: clients.renew) {
                let client = clients.client
                try await withThrowingTaskGroup(of: Void.self) { group in
                    var next = 0
                    func add() {
                        guard next < urls.count else { return }
                        let url = urls[next]
                        next += 1
                        group.addTask {
                            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
                            _ = try await response.body.collect(upTo: 1 << 20)
                        }
                    }
                    for _ in 0..<256 { add() }
                    while try await group.next() != nil { add() }
                }
            }
        }
        let contenders: [FixedWork] = [
            FixedWork(name: "courier", renew: sessions.renew) {
                let outcome = try await sessions.client.batch(requests, options: BatchOptions(concurrency: 256))
                guard outcome.allSucceeded else {
                    throw BenchError.unexpected("courier: \(outcome.failedIndices.count) failed")
                }
            },
            ahc("ahc", clients),
            ahc("ahc-defaults", defaultClients),
        ]
        let rounds = max(1, min(plan.rounds, 5))
        let times = try await FixedWork.compare(contenders, rounds: rounds) { name, run in
            MemoryUse.resetPeak()
            let before = CPUChild.cpuMicros()
            try await run()
            cpu[name, default: []].append((CPUChild.cpuMicros() - before) / Double(count))
            if let mib = MemoryUse.peakMiB() { peak[name] = max(peak[name] ?? 0, mib) }
        }
        let cpuMedians = cpu.mapValues(Throughput.median)
        try await sessions.shutdown()
        try await clients.shutdown()
        try await defaultClients.shutdown()
        let rates = RoundResults(samples: times.mapValues { $0.map { Double(count) / $0.seconds } })
        let ratio = rates.medians.ratio("courier", to: "ahc")
        return ScenarioResult(
            name: "batch-10k",
            unit: "req/s",
            higherIsBetter: true,
            results: rates.medians,
            metrics: ["peak_rss_mib": peak, "cpu_us_per_req": cpuMedians],
            notes: String(
                format:
                    "%d GETs of 1 KiB, 256 in flight; courier/ahc = %.3f (target >= 0.9; middle half of the rounds %@); courier peak RSS %.0f MiB (target < 200); median of %d rounds, each on new clients; default connection pools; ahc is set up as Courier sets it up, ahc-defaults is AsyncHTTPClient's default configuration; "
                    + "CPU per request of the whole process (the in-process server's share included, the same for every contender): courier %.1f us, ahc %.1f us (%.3f), steadier than req/s on a shared machine",
                count,
                ratio,
                rates.spread("courier", to: "ahc"),
                peak["courier"] ?? 0,
                rounds,
                cpuMedians["courier"] ?? 0,
                cpuMedians["ahc"] ?? 0,
                (cpuMedians["courier"] ?? 0) / max(cpuMedians["ahc"] ?? 1, 0.001)
            )
        )
    }

    /// `coalesce-1000`: 1,000 concurrent identical GETs of an endpoint that takes 50 ms. The headline is how many
    /// reach the server: Courier shares one call (`courier`), as does raw AsyncHTTPClient behind a minimal
    /// single-flight map (`ahc-singleflight`), whose time is the fair comparison; raw AsyncHTTPClient without
    /// sharing (`ahc`) sends all 1,000 through its eight connections.
    static let coalesce1000 = Scenario(name: "coalesce-1000") { target, plan in
        let count = plan.rounds > 1 ? 1000 : 100
        let url = target.base.appending(path: "delay/50").absoluteString
        let session = Session(configuration: Configuration { $0.validators = [] })
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: .likeCourier())
        let flights = SingleFlight()
        var hits: [String: Double] = [:]
        @Sendable func allAtOnce(_ send: @escaping @Sendable () async throws -> Void) async throws {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<count { group.addTask { try await send() } }
                try await group.waitForAll()
            }
        }
        @Sendable func get() async throws -> ByteBuffer {
            let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
            return try await response.body.collect(upTo: 1 << 20)
        }
        let contenders = [
            FixedWork(name: "courier") { try await allAtOnce { _ = try await session.send(Request<Data>.get(url)) } },
            FixedWork(name: "ahc-singleflight") { try await allAtOnce { _ = try await flights.value(for: url, get) } },
            FixedWork(name: "ahc") { try await allAtOnce { _ = try await get() } },
        ]
        let rounds = max(1, min(plan.rounds, 3))
        let times = try await FixedWork.compare(contenders, rounds: rounds) { name, run in
            let before = target.server?.hits("/delay/50") ?? 0
            try await run()
            if let server = target.server { hits[name] = Double(server.hits("/delay/50") - before) }
        }.mapValues { Throughput.median($0).seconds * 1000 }
        try await session.shutdown()
        try await client.shutdown()
        let timing = String(
            format:
                "time of a round: courier %.0f ms, ahc-singleflight %.0f ms (courier/ahc-singleflight = %.2f), ahc unshared %.0f ms",
            times["courier"] ?? 0,
            times["ahc-singleflight"] ?? 0,
            (times["courier"] ?? 0) / max(times["ahc-singleflight"] ?? 1, 1),
            times["ahc"] ?? 0
        )
        let unit = hits.isEmpty ? "ms" : "server hits"
        return ScenarioResult(
            name: "coalesce-1000",
            unit: unit,
            higherIsBetter: false,
            results: hits.isEmpty ? times : hits,
            metrics: ["round_ms": times],
            notes: (hits.isEmpty
                ? "server hits unknown against --url, so results hold the time of a round; "
                : "server hits per round (target: courier 1); ")
                + "\(count) concurrent identical GETs of /delay/50; \(timing); median of \(rounds) rounds; default connection pools"
        )
    }
}

/// The least a caller of raw AsyncHTTPClient would write to share identical calls: one task per key in flight,
/// which every caller of that key awaits; the entry goes when the call ends.
final class SingleFlight: Sendable {
    private let calls = Locked<[String: Task<ByteBuffer, any Error>]>([:])

    func value(for key: String, _ fetch: @escaping @Sendable () async throws -> ByteBuffer) async throws -> ByteBuffer {
        let task = calls.withLock { calls in
            if let call = calls[key] { return call }
            let call = Task { [calls = self.calls] in
                defer { _ = calls.withLock { $0.removeValue(forKey: key) } }
                return try await fetch()
            }
            calls[key] = call
            return call
        }
        return try await task.value
    }
}

/// A contender that does a fixed amount of work; timed as a whole.
struct FixedWork: Sendable {
    var name: String
    /// Replaces the contender's client before each round after the first, outside the timing (see ``RoundClient``).
    var renew: (@Sendable () async throws -> Void)?
    var work: @Sendable () async throws -> Void

    /// Runs each contender `rounds` times, alternating the order, and returns each one's times in round order.
    /// `around` wraps every timed run (given the contender's name), for figures taken before and after it:
    /// peak memory, server hits.
    static func compare(
        _ contenders: [FixedWork],
        rounds: Int,
        around: (String, () async throws -> Void) async throws -> Void
    ) async throws -> [String: [Duration]] {
        var times: [String: [Duration]] = [:]
        for round in 0..<rounds {
            for contender in round % 2 == 0 ? contenders : contenders.reversed() {
                if let renew = contender.renew, round > 0 { try await renew() }
                try await around(contender.name) {
                    let start = ContinuousClock.now
                    try await contender.work()
                    times[contender.name, default: []].append(start.duration(to: .now))
                }
            }
        }
        return times
    }
}

/// The process's resident memory, from Linux's /proc.
enum MemoryUse {
    /// Resets the peak (VmHWM) to the current RSS; Linux 4.0 and later.
    static func resetPeak() {
        try? Data("5".utf8).write(to: URL(filePath: "/proc/self/clear_refs"))
    }

    /// The peak RSS since the last reset, in MiB; `nil` when /proc cannot tell.
    static func peakMiB() -> Double? { statusMiB("VmHWM:") }

    /// The RSS now, in MiB; `nil` when /proc cannot tell.
    static func currentMiB() -> Double? { statusMiB("VmRSS:") }

    /// A size field of /proc/self/status (given in KiB), in MiB.
    private static func statusMiB(_ field: String) -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
            let kib = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kib / 1024
    }
}
