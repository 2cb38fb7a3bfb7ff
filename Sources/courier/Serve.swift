import ArgumentParser
import CourierTesting
import NIOCore
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
            --uploads-port also runs the resumable-upload server (the IETF draft) there, for courier upload --resumable:
            it takes resumable uploads (and plain POST and PUT bodies) to any path and answers with their length
            and SHA-256.
            Examples:
              courier serve --port 8080 & courier get http://127.0.0.1:8080/echo
              courier serve --uploads-port 8081
            """
        )
    )

    @Option(help: "The port to listen on (0 picks a free one).")
    var port: Int = 8080

    @Option(help: "Also run the resumable-upload server on this port (0 picks a free one).")
    var uploadsPort: Int?

    func validate() throws {
        if !(0...65535).contains(port) { throw ValidationError("--port must be between 0 and 65535") }
        if let uploadsPort, !(0...65535).contains(uploadsPort) {
            throw ValidationError("--uploads-port must be between 0 and 65535")
        }
    }

    func run() async throws {
        // Until SIGINT or SIGTERM shuts it down gracefully (CommandServices): the server closes, the command exits 0.
        try await Output.exitOnFailure(cancelsOnSignal: false) { [port, uploadsPort] in
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
                var uploads: ResumableUploadServer?
                if let uploadsPort { uploads = try await ResumableUploadServer.start(port: uploadsPort) }
                try Output.stdout("serving on \(server.baseURL.absoluteString) (Ctrl-C to stop)")
                if let uploads { try Output.stdout("resumable uploads on \(uploads.baseURL.absoluteString)") }
                try? await gracefulShutdown()
                await server.shutdown()
                await uploads?.shutdown()
            }
        }
    }
}
