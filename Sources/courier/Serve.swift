import ArgumentParser
import CourierTesting
import Foundation
import NIOCore
import ServiceLifecycle

/// `courier serve`: runs the loopback test server for trying things by hand.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the CourierTesting loopback server (127.0.0.1) until interrupted.",
        discussion: HelpText.reflow(
            """
            Routes include /echo, /small, /status/N, /delay/MS, /flaky/KEY?failures=N (fails N times, then
            answers), /redirect/N, /redirect-to?url=U, /gzip, /deflate, /bytes/N, /file/N (ranges, and faults such
            as ?cut=K or ?rate=B), /drip, /json, /cache/KEY?cache-control=V (validators and 304s), /set-cookies,
            /response-headers, /multipart and the faults under /fault/ (close-at/K, reset, wrong-length,
            bad-chunked, stall, bad-gzip, bomb, huge-header, cut-upload).
            Example:
              courier serve --port 8080 & courier get http://127.0.0.1:8080/echo
            """
        )
    )

    @Option(help: "The port to listen on (0 picks a free one).")
    var port: Int = 8080

    func validate() throws {
        if !(0...65535).contains(port) { throw ValidationError("--port must be between 0 and 65535") }
    }

    func run() async throws {
        // Until SIGINT or SIGTERM shuts it down gracefully (CommandServices): the server closes, the command exits 0.
        try await Output.exitOnFailure(cancelsOnSignal: false) { [port] in
            _ = try await CommandServices.run([]) {
                let server: TestServer
                do { server = try await TestServer.start(port: port) } catch let error as IOError
                    where error.errnoCode == EADDRINUSE
                {
                    throw CommandFailure(
                        description: "port \(port) is in use: stop what listens there, or pick another with --port "
                            + "(--port 0 picks a free one)"
                    )
                }
                Output.stdout("serving on \(server.baseURL.absoluteString) (Ctrl-C to stop)")
                try? await gracefulShutdown()
                await server.shutdown()
            }
        }
    }
}
