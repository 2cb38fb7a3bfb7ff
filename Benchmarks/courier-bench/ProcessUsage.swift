import Foundation

/// What whole processes cost, each run as a script starts it (no shell in between): wall time and CPU time (user
/// and system), from the kernel's figures for that one child (`wait4`), and peak resident set through GNU time. A
/// small Python parent starts them, so this process's own threads are not in the figures.
enum ProcessUsage {
    /// One run of one command.
    struct Sample: Decodable {
        var wall: Double
        var cpu: Double
    }

    private static let script = """
        import json, os, sys, time
        commands, runs = json.loads(sys.argv[1]), int(sys.argv[2])
        null = os.open(os.devnull, os.O_RDWR)
        samples = {name: [] for name, _ in commands}
        for run in range(runs):
            for name, argv in (commands if run % 2 == 0 else commands[::-1]):
                start = time.monotonic()
                pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[
                    (os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)])
                _, status, usage = os.wait4(pid, 0)
                wall = time.monotonic() - start
                if os.waitstatus_to_exitcode(status) != 0:
                    sys.exit("%s exited %d" % (name, os.waitstatus_to_exitcode(status)))
                samples[name].append({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime})
        json.dump(samples, sys.stdout)
        """

    /// Runs each command `runs` times, alternating their order, and returns every sample by command name.
    static func measure(_ commands: [(name: String, argv: [String])], runs: Int) async throws -> [String: [Sample]] {
        let list = try JSONSerialization.data(withJSONObject: commands.map { [$0.name, $0.argv] as [Any] })
        let output = try await Tools.output(
            URL(filePath: "/usr/bin/env"),
            ["python3", "-c", script, String(decoding: list, as: UTF8.self), String(runs)]
        )
        return try JSONDecoder().decode([String: [Sample]].self, from: Data(output.utf8))
    }

    /// The peak resident set of each command over `runs` runs each, in KiB, as GNU time reports it for the process
    /// it starts (`time -f %M`); nil, with a note, when GNU time is not installed.
    ///
    /// Not `wait4`'s figure for a child of this process or of Python: a child begins as its parent's copy (`vfork`
    /// shares it outright), and the kernel keeps that copy's resident set as the child's peak when it calls `exec`,
    /// so `/bin/true` spawned from Python read as 14 MiB where GNU time, a 1 MiB parent, reads 1 MiB.
    static func peakResidentKiB(
        _ commands: [(name: String, argv: [String])],
        runs: Int,
        noting notes: inout String
    ) async throws -> [String: [Int]]? {
        guard let time = Tools.find("time", noting: &notes) else {
            notes += "(GNU time measures the peak RSS: apt-get install time); "
            return nil
        }
        let report = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: report) }
        var peaks: [String: [Int]] = [:]
        for run in 0..<runs {
            for (name, argv) in run % 2 == 0 ? commands : commands.reversed() {
                try await Tools.run(time, ["-f", "%M", "-o", report.path] + argv)
                let text = String(decoding: try Data(contentsOf: report), as: UTF8.self)
                guard let kib = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                    throw BenchError.unexpected("GNU time reported '\(text)' for \(name)")
                }
                peaks[name, default: []].append(kib)
            }
        }
        return peaks
    }
}
