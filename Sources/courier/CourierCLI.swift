import ArgumentParser
import Courier
import HTTPTypes
import NIOCore

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

/// `courier`: a curl-like tool built on the Courier library. Parsing and printing only.
@main
struct CourierCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "HTTP requests, the loopback test server and an offline tour of the Courier library.",
        discussion: HelpText.reflow(
            """
            Examples:
              courier get 127.0.0.1:8080/echo --param q=swift -H 'Accept: text/plain'
              courier post 127.0.0.1:8080/echo --json '{"name":"ada"}' -i
              courier batch urls.txt --concurrency 16
              courier get 127.0.0.1:8080/small --cache cache-else-network --ttl 300
              courier cache stats
              courier download 127.0.0.1:8080/file/1000000 -o big.bin --connections 4
              courier get https://localhost:8443/echo --cacert ca.pem --pin sha256/BASE64
              courier events 127.0.0.1:8080/events --json
              courier reachability 127.0.0.1:8080 --watch
              courier serve --port 8080
              courier demo
              courier 127.0.0.1:8080/echo       (a URL first means get)
              courier -sS -X PUT 127.0.0.1:8080/echo -d a=1 -f
              courier POST 127.0.0.1:8080/echo name=ada age:=42 q==swift X-Trace:7

            Exit codes (curl's: any answer is 0 unless -f or --check-status asks):
            """
        ) + "\n" + ExitStatus.table,
        version: Courier.version,
        subcommands: [
            Get.self, Post.self, Put.self, Delete.self, Patch.self, Head.self, BatchCommand.self, CacheCommand.self,
            DownloadCommand.self, QueueCommand.self, UploadCommand.self, EventsCommand.self, WebSocketCommand.self,
            ReachabilityCommand.self, Serve.self, Demo.self,
        ]
    )

    /// Reads the line as curl and xh users write it (``CommandLineGrammar``: a URL, an option or a method word
    /// first means the request command), refuses a first word that names no subcommand with a suggestion (exit 64),
    /// then parses as usual.
    static func main() async {
        Output.ignoreBrokenPipes()
        let typed = Array(CommandLine.arguments.dropFirst())
        if typed == ["--version"] {  // before swift-argument-parser, whose first parse costs more than printing this
            exitProcess((try? Output.stdout(Courier.version)) == nil ? ExitStatus.writeError.rawValue : 0)
        }
        let names = commandNames
        let arguments = CommandLineGrammar.normalized(typed, commands: names)
        if let first = arguments.first, let message = UnknownCommand.message(for: first, among: names + ["help"]) {
            Output.stderr(message)
            exitProcess(ExitStatus.usage.rawValue)
        }
        let requestCommands: [any MethodCommand.Type] = [
            Get.self, Post.self, Put.self, Delete.self, Patch.self, Head.self,
        ]
        if let first = arguments.first,
            let command = requestCommands.first(where: { $0.commandName == first })
        {
            let words = Array(arguments.dropFirst())
            if let message = CurlFlagsElsewhere.message(for: words) {
                Output.stderr(message)
                exitProcess(ExitStatus.usage.rawValue)
            }
            NIOSingletons.groupLoopCountSuggestion = 1  // one request needs no second thread
            if let options = RequestCommandLine.options(words) { await send(options, with: command) }
        }
        await main(arguments)
    }

    /// The subcommands' names, written out so that a request reads no command's configuration (whose help texts
    /// are reflowed as it is made); a test checks them against `configuration.subcommands`.
    static let commandNames = [
        "get", "post", "put", "delete", "patch", "head", "batch", "cache", "download", "queue", "upload", "events",
        "ws", "reachability", "serve", "demo",
    ]

    /// Sends a request whose line ``RequestCommandLine`` read, and exits as swift-argument-parser's `main` would
    /// after the command's `run()`.
    private static func send(_ options: RequestSettings, with command: any MethodCommand.Type) async -> Never {
        do {
            try await command.run(options)
            exitProcess(0)
        } catch {
            exitProcess((error as? ExitCode)?.rawValue ?? ExitStatus.of(error).rawValue)
        }
    }
}

/// The C library's `exit`, under a name the command's own `exit(withError:)` does not hide.
private func exitProcess(_ code: Int32) -> Never { exit(code) }
