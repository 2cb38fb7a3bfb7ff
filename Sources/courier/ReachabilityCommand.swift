import ArgumentParser
import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `courier reachability HOST[:PORT] [--watch]`: whether a host's port accepts connections, now or as it changes.
struct ReachabilityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reachability",
        abstract: "Tell whether HOST[:PORT] can be reached, and over which kind of interface.",
        discussion: HelpText.reflow(
            """
            Probes with a TCP connection (closed at once) and checks that an interface is up. Exits 0 when reachable.
            Examples:
              courier reachability 127.0.0.1:8080
              courier reachability https://example.com --watch --interval 2
            """
        )
    )

    @Argument(help: "HOST, HOST:PORT or a URL (port 80, or 443 for https, when none is given).")
    var target: String

    @Flag(help: "Keep probing and print each change until interrupted.")
    var watch = false

    @Option(help: "Seconds between probes with --watch (default 5).")
    var interval: String?

    func run() async throws {
        // With --watch, until SIGINT or SIGTERM shuts the monitor down gracefully (CommandServices); exit 0.
        try await Output.exitOnFailure(cancelsOnSignal: !watch) {
            let endpoint = try CommandLineInput.reachabilityTarget(target)
            let every = try interval.map { try CommandLineInput.seconds($0) } ?? .seconds(5)
            let monitor = ReachabilityMonitor(host: endpoint.host, port: endpoint.port, interval: every)
            let name = "\(monitor.host):\(monitor.port)"
            guard watch else {
                let status = await monitor.check()
                try Output.stdout("\(name): \(status)")
                if !status.isReachable { throw ExitCode(1) }
                return
            }
            _ = try await CommandServices.run([]) {
                let updates = await monitor.updates()  // before it starts, so the first probe is seen
                async let printed: Void = {
                    for await status in updates where status != .unknown {
                        try Output.stdout("\(Date().formatted(.iso8601)) \(name): \(status)")
                    }
                }()
                try await monitor.run()  // as a service: probes until graceful shutdown, then ends the updates
                try await printed
            }
        }
    }
}
