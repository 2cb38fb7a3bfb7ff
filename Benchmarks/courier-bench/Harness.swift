import Courier
import Foundation

/// How long each contender runs, and how many times the contenders take turns.
struct RoundPlan: Sendable {
    var rounds: Int
    var duration: Duration
    var warmup: Duration
    /// The warm-up of a contender's new client at the start of each round (see ``RoundClient``): long enough to
    /// open its connections.
    var renewalWarmup: Duration

    static let full = RoundPlan(
        rounds: 15,
        duration: .seconds(1),
        warmup: .seconds(1),
        renewalWarmup: .milliseconds(200)
    )
    static let quick = RoundPlan(
        rounds: 1,
        duration: .milliseconds(300),
        warmup: .milliseconds(100),
        renewalWarmup: .milliseconds(50)
    )

    /// Whether this is the `--quick` plan, which also shrinks the files of the transfer scenarios.
    var isQuick: Bool { rounds == 1 }
}

/// One contender in a throughput scenario: something that sends one request and waits for the whole body.
struct Contender: Sendable {
    var name: String
    var prepare: @Sendable () async throws -> Void = {}
    /// Replaces the contender's client before each round after the first, which is then warmed up again (see
    /// ``RoundClient``).
    var renew: (@Sendable () async throws -> Void)?
    var request: @Sendable () async throws -> Void
    var finish: @Sendable () async throws -> Void = {}
}

/// What ``Throughput/compare(_:concurrency:plan:)`` measured: each contender's rate in every round.
struct RoundResults: Sendable {
    /// The rates per contender, in round order.
    var samples: [String: [Double]]

    /// Each contender's median rate: the headline figure.
    var medians: [String: Double] { samples.mapValues(Throughput.median) }

    /// The middle half of the per-round ratios of `contender` to `baseline` (each round ran both), as text:
    /// how far one round's ratio strays from the median's.
    func spread(_ contender: String, to baseline: String) -> String {
        guard let mine = samples[contender], let theirs = samples[baseline], !mine.isEmpty, mine.count == theirs.count
        else { return "n/a" }
        let ratios = zip(mine, theirs).map { $0 / Swift.max($1, 1) }.sorted()
        return String(format: "%.2f-%.2f", ratios[ratios.count / 4], ratios[(ratios.count * 3) / 4])
    }
}

/// What a scenario produced.
struct ScenarioResult: Sendable {
    var name: String
    var unit: String
    var higherIsBetter: Bool
    var results: [String: Double]
    var metrics: [String: [String: Double]] = [:]
    var notes: String
}

enum Throughput {
    /// Runs `concurrency` workers that send requests back to back until `duration` passes; returns requests/s.
    static func measure(_ contender: Contender, concurrency: Int, duration: Duration) async throws -> Double {
        let start = ContinuousClock.now
        let deadline = start + duration
        let completed = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var count = 0
                    while ContinuousClock.now < deadline {
                        try await contender.request()
                        count += 1
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = start.duration(to: .now)
        return Double(completed) / elapsed.seconds
    }

    /// Lets every contender run in turn, `plan.rounds` times, and reports each one's rate in every round.
    static func compare(_ contenders: [Contender], concurrency: Int, plan: RoundPlan) async throws -> RoundResults {
        for contender in contenders { try await contender.prepare() }
        for contender in contenders {
            _ = try await measure(contender, concurrency: concurrency, duration: plan.warmup)
        }
        var samples: [String: [Double]] = [:]
        for round in 0..<plan.rounds {
            // Alternate the order each round so no contender always runs first (or right after another).
            let order = round % 2 == 0 ? contenders : contenders.reversed()
            for contender in order {
                if let renew = contender.renew, round > 0 {
                    try await renew()
                    _ = try await measure(contender, concurrency: concurrency, duration: plan.renewalWarmup)
                }
                samples[contender.name, default: []].append(
                    try await measure(contender, concurrency: concurrency, duration: plan.duration)
                )
            }
        }
        for contender in contenders { try await contender.finish() }
        return RoundResults(samples: samples)
    }

    /// The middle value (the upper middle for an even count) of a non-empty list.
    static func median<Value: Comparable>(_ values: [Value]) -> Value { values.sorted()[values.count / 2] }
}

extension Dictionary where Key == String, Value == Double {
    /// `self[contender] / self[baseline]`, 0 when the contender is missing (a baseline of less than 1 counts as 1).
    func ratio(_ contender: String, to baseline: String) -> Double {
        (self[contender] ?? 0) / Swift.max(self[baseline] ?? 1, 1)
    }
}
