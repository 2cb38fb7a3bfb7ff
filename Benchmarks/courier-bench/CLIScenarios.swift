import Courier
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The `courier` command line against curl, each run as the process a script would start: the built `courier`
/// beside this executable (build it in the same configuration, `swift build -c release --product courier`),
/// else the contender is left out with a note.
extension Scenario {
    /// `cli-get-1g`: one body of 1 GiB (64 MiB with `--quick`) written to a file with `-o` and to `/dev/null`
    /// through stdout, `courier get -s` against `curl -s`. From nginx's `/big` with `--url` (see
    /// `Scripts/bench-nginx`), else from the in-process server. Also courier's peak RSS both ways, from GNU time
    /// for separate, untimed runs.
    static let cliGet1G = Scenario(name: "cli-get-1g") { target, plan in
        let external = target.server == nil  // nginx from Scripts/bench-nginx, whose /big is 1 GiB
        let size = external || !plan.isQuick ? 1 << 30 : 64 << 20
        let url = (external ? target.base.appending(path: "big") : target.base.appending(path: "blob/\(size)"))
            .absoluteString
        var notes = ""
        guard let courier = CLIRuns.courier(noting: &notes) else {
            return ScenarioResult(name: "cli-get-1g", unit: "MB/s", higherIsBetter: true, results: [:], notes: notes)
        }
        let directory = try Transfers.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("body.bin").path
        var commands: [(name: String, line: String)] = [
            ("courier-o", "\(courier.path) get -s -o \(file) \(url)"),
            ("courier-stdout", "\(courier.path) get -s \(url) >/dev/null"),
        ]
        if let curl = Tools.find("curl", noting: &notes) {
            commands += [
                ("curl-o", "\(curl.path) -s -o \(file) \(url)"), ("curl-stdout", "\(curl.path) -s \(url) >/dev/null"),
            ]
        }
        let rounds = plan.isQuick ? 1 : 5
        var seconds: [String: [Double]] = [:]
        for round in 0..<rounds {
            for (name, line) in round % 2 == 0 ? commands : commands.reversed() {
                seconds[name, default: []].append(try await CLIRuns.time(line))
                if name.hasSuffix("-o") {
                    let written = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? -1
                    guard written == size else {
                        throw BenchError.unexpected("\(name) wrote \(written) of \(size) bytes")
                    }
                    try? FileManager.default.removeItem(atPath: file)
                }
                sync()  // untimed: the next run does not pay for writing this one's pages out
            }
        }
        let results = seconds.mapValues { Double(size) / 1e6 / Throughput.median($0) }
        let peaks = try await ProcessUsage.peakResidentKiB(
            commands.filter { $0.name.hasPrefix("courier") }.map { ($0.name, ["/bin/sh", "-c", $0.line]) },
            runs: 1,
            noting: &notes
        )
        try? FileManager.default.removeItem(atPath: file)
        let peak = peaks?.mapValues { Double($0.max() ?? 0) / 1024 } ?? [:]
        var versus = ""
        if results["curl-o"] != nil {
            versus = String(
                format:
                    "curl-o/courier-o time = %.2f, curl-stdout/courier-stdout time = %.2f (courier's time within 1.1x of curl's: ratio >= 0.91); ",
                results.ratio("courier-o", to: "curl-o"),
                results.ratio("courier-stdout", to: "curl-stdout")
            )
        }
        return ScenarioResult(
            name: "cli-get-1g",
            unit: "MB/s",
            higherIsBetter: true,
            results: results,
            metrics: ["peak_rss_mib": peak],
            notes: notes + versus
                + String(
                    format: "courier peak RSS %.0f MiB to -o, %.0f MiB to stdout (target <= 64, GNU time's figure); ",
                    peak["courier-o"] ?? 0,
                    peak["courier-stdout"] ?? 0
                )
                + "\(ByteCount.format(size)) per run, median of \(rounds) runs each, one process per run"
        )
    }

    /// `cli-get-1k`: whole processes that fetch 1 KiB (`courier get -s` against `curl -s`, and xh and httpie when
    /// installed), 200 runs each (20 with `--quick`), alternating: start-up is what a script pays for. Per process:
    /// wall time (the result) and CPU time, from the kernel's figures for each child; peak resident set, the median
    /// of 40 more runs each through GNU time (see ``ProcessUsage/peakResidentKiB(_:runs:noting:)``); then
    /// `courier --version` (median of 20), and the binary's size and shared libraries.
    static let cliGet1K = Scenario(name: "cli-get-1k") { target, plan in
        let url = target.base.appending(path: "small").absoluteString
        var notes = ""
        var commands: [(name: String, argv: [String])] = []
        let courier = CLIRuns.courier(noting: &notes)
        if let courier { commands.append(("courier", [courier.path, "get", "-s", url])) }
        if let curl = Tools.find("curl", noting: &notes) { commands.append(("curl", [curl.path, "-s", url])) }
        if let xh = Tools.find("xh", noting: &notes) { commands.append(("xh", [xh.path, "--ignore-stdin", url])) }
        if let http = Tools.find("http", noting: &notes) {
            commands.append(("httpie", [http.path, "--ignore-stdin", url]))
        }
        let runs = plan.isQuick ? 20 : 200
        let samples = try await ProcessUsage.measure(commands, runs: runs)
        let results = samples.mapValues { runs in 1000 * runs.map(\.wall).reduce(0, +) / Double(max(runs.count, 1)) }
        let cpu = samples.mapValues { 1000 * Throughput.median($0.map(\.cpu)) }
        let peaks = try await ProcessUsage.peakResidentKiB(commands, runs: plan.isQuick ? 5 : 40, noting: &notes) ?? [:]
        let rss = peaks.mapValues { Throughput.median($0.map(Double.init)) / 1024 }
        var summary = ""
        if let courierCPU = cpu["courier"], let curlCPU = cpu["curl"] {
            summary += String(
                format: "CPU per process courier %.1f ms, curl %.1f ms: courier/curl %.2f (target <= 1.5, goal 1.2); ",
                courierCPU,
                curlCPU,
                courierCPU / max(curlCPU, 0.001)
            )
        }
        if let courier {
            let version = try await ProcessUsage.measure([("version", [courier.path, "--version"])], runs: 20)
            let wall = Throughput.median((version["version"] ?? []).map(\.wall)) * 1000
            let libraries = try await Tools.output(URL(filePath: "/usr/bin/ldd"), [courier.path])
                .split(separator: "\n").filter { !$0.contains("linux-vdso") }.count
            let size = FileManager.default.sizeOfItem(atPath: courier.path) ?? 0
            if let courierRSS = rss["courier"], let highest = peaks["courier"]?.max() {
                summary += String(
                    format: "courier peak RSS %.1f MiB (median of %d runs, highest %.1f; target <= 16)%@; ",
                    courierRSS,
                    peaks["courier"]?.count ?? 0,
                    Double(highest) / 1024,
                    rss["curl"].map { String(format: ", curl %.1f", $0) } ?? ""
                )
            }
            summary += String(
                format: "--version %.1f ms (median of 20, target <= 5); "
                    + "binary %.1f MB (target <= 40), %d shared libraries (target <= 10); ",
                wall,
                Double(size) / 1e6,
                libraries
            )
        }
        let medians = samples.sorted { $0.key < $1.key }.map {
            String(format: "%@ %.1f", $0.key, Throughput.median($0.value.map(\.wall)) * 1000)
        }
        return ScenarioResult(
            name: "cli-get-1k",
            unit: "ms per process",
            higherIsBetter: false,
            results: results,
            metrics: ["cpu_ms": cpu, "peak_rss_mib": rss],
            notes: notes + summary + "wall: mean of \(runs) runs each, alternating; medians (ms): "
                + medians.joined(separator: ", ")
        )
    }
}

/// Running shell command lines for the CLI scenarios.
enum CLIRuns {
    /// The `courier` executable named by `COURIER_CLI` (the one `Scripts/install` made, say), else the one built
    /// beside this one.
    static func courier(noting notes: inout String) -> URL? {
        if let named = ProcessInfo.processInfo.environment["COURIER_CLI"], !named.isEmpty {
            guard FileManager.default.isExecutableFile(atPath: named) else {
                notes += "COURIER_CLI names \(named), which is not an executable, so courier was left out; "
                return nil
            }
            return URL(filePath: named)
        }
        let beside = URL(filePath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("courier")
        guard FileManager.default.isExecutableFile(atPath: beside.path) else {
            notes +=
                "courier is not built beside courier-bench (swift build -c release --product courier), so it was left out; "
            return nil
        }
        return beside
    }

    /// Runs `line` with `/bin/sh -c` and returns its wall time in seconds; throws unless it exits 0.
    static func time(_ line: String) async throws -> Double {
        let start = ContinuousClock.now
        try await Tools.run(URL(filePath: "/bin/sh"), ["-c", line])
        return start.duration(to: .now).seconds
    }
}
