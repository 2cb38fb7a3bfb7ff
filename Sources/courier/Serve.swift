import ArgumentParser
import CourierTesting
import Foundation

/// `courier serve`: runs the loopback test server for trying things by hand.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the CourierTesting loopback server (127.0.0.1) until interrupted.",
        discussion: """
            Routes include /echo, /small, /status/N, /delay/MS, /redirect/N, /gzip, /bytes/N, /file/N (ranges),
            /drip, /json, /multipart and the faults under /fault/ (close-at/K, reset, wrong-length, bad-chunked,
            stall, bad-gzip, bomb, huge-header).
            Example: courier serve --port 8080 & courier get http://127.0.0.1:8080/echo
            """
    )

    @Option(help: "The port to listen on (0 picks a free one).")
    var port: Int = 8080

    func validate() throws {
        if !(0...65535).contains(port) { throw ValidationError("--port must be between 0 and 65535") }
    }

    func run() async throws {
        try await Output.exitOnFailure {
            let server = try await TestServer.start(port: port)
            Output.stdout("serving on \(server.baseURL.absoluteString) (Ctrl-C to stop)")
            while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
            await server.shutdown()
        }
    }
}
