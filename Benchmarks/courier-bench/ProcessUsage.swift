import Foundation

/// What whole processes cost, each run as a script starts it (no shell in between): wall time, CPU time (user and
/// system) and peak resident set, all from the kernel's figures for that one child (`wait4`). A small Python
/// parent starts them, so this process's own threads are not in the figures.
enum ProcessUsage {
    /// One run of one command.
    struct Sample: Decodable {
        var wall: Double
        var cpu: Double
        /// KiB.
        var rss: Int
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
                samples[name].append({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss})
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
}
