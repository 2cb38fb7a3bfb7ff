import ArgumentParser
import Foundation

/// `courier-bench`: measures Courier side by side with raw AsyncHTTPClient and URLSession, contenders taking
/// turns within one run so their ratio holds on a noisy machine.
@main
struct CourierBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier-bench",
        abstract: "Benchmark Courier against raw AsyncHTTPClient and URLSession.",
        discussion: """
            Scenarios: \(Scenario.all.map(\.name).joined(separator: ", ")).
            Example: swift run -c release courier-bench --scenario get-small-c64 --json bench.json
            """
    )

    @Option(name: .customLong("scenario"), help: "A scenario to run (repeatable; default: all).")
    var scenarios: [String] = []

    @Option(
        help:
            "A server to measure against instead of the in-process one; it must serve /small (1 KiB) and /delay/50 (1 KiB after 50 ms)."
    )
    var url: String?

    @Option(help: "Also write the results as JSON to PATH.")
    var json: String?

    @Flag(help: "One short round per contender: checks the harness, not the speed.")
    var quick = false

    @Option(help: .hidden)
    var cpuChild: String?  // the child process of cpu-per-request

    @Option(help: .hidden)
    var fleetChild: String?  // a child process of fleet-cache

    @Option(help: .hidden)
    var overheadChild: String?  // one contender of session-overhead, alone, for profiling

    @Option(help: .hidden)
    var queueChild: Int?  // a worker process of queue-workers

    @Option(help: .hidden)
    var wsChild: String?  // a child process of ws-echo

    func validate() throws {
        let unknown = scenarios.filter { name in !Scenario.all.contains { $0.name == name } }
        if !unknown.isEmpty { throw ValidationError("unknown scenario \(unknown.joined(separator: ", "))") }
        if let url, URL(string: url)?.host() == nil { throw ValidationError("--url must be an absolute URL") }
    }

    func run() async throws {
        if let cpuChild {
            guard let url else { throw ValidationError("--cpu-child needs --url") }
            return try await CPUChild.run(cpuChild, base: url)
        }
        if let wsChild {
            guard let url else { throw ValidationError("--ws-child needs --url") }
            return try await WebSocketChild.run(wsChild, url: url)
        }
        if let overheadChild { return try await Scenario.overheadChild(overheadChild) }
        if let queueChild { return try await QueueChild.run(concurrency: queueChild) }
        if let fleetChild {
            guard let url else { throw ValidationError("--fleet-child needs --url") }
            return try await FleetChild.run(fleetChild, prefix: url)
        }
        let selected = scenarios.isEmpty ? Scenario.all : Scenario.all.filter { scenarios.contains($0.name) }
        let server = url == nil ? try await BenchServer.start() : nil
        let base = url.flatMap(URL.init(string:)) ?? server?.baseURL
        guard let base else { throw ValidationError("no server to measure") }
        let plan = quick ? RoundPlan.quick : RoundPlan.full
        var results: [ScenarioResult] = []
        for scenario in selected {
            FileHandle.standardError.write(Data("running \(scenario.name) against \(base.absoluteString)…\n".utf8))
            results.append(try await scenario.run(BenchTarget(base: base, server: server), plan))
        }
        try await server?.shutdown()
        print(Report.markdown(results))
        if let json {
            try Report.json(results).write(to: URL(filePath: json), options: .atomic)
        }
    }
}
