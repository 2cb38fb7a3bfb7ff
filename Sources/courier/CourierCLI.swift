import ArgumentParser
import Foundation

/// `courier`: a curl-like tool built on the Courier library. Parsing and printing only.
@main
struct CourierCLI: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "HTTP requests, the loopback test server and an offline tour of the Courier library.",
        discussion: HelpText.reflow("""
            Examples:
              courier get http://127.0.0.1:8080/echo --param q=swift -H 'Accept: application/json'
              courier post http://127.0.0.1:8080/echo --json '{"name":"ada"}'
              courier batch urls.txt --concurrency 16
              courier get http://127.0.0.1:8080/small --cache cache-else-network --ttl 300
              courier cache stats
              courier download http://127.0.0.1:8080/file/1000000 -o big.bin --connections 4
              courier get https://localhost:8443/echo --cacert ca.pem --pin sha256/BASE64
              courier reachability 127.0.0.1:8080 --watch
              courier serve --port 8080
              courier demo

            Exit codes: 0 success; 4 and 5 for a 4xx or 5xx answer to get, post, put, delete, patch and head;
            1 for any other failure, told in one line on stderr; 64 for a usage error.
            """),
        subcommands: [
            Get.self, Post.self, Put.self, Delete.self, Patch.self, Head.self, BatchCommand.self, CacheCommand.self, DownloadCommand.self, QueueCommand.self, UploadCommand.self, ReachabilityCommand.self, Serve.self, Demo.self,
        ]
    )

    /// Refuses a first word that names no subcommand with a suggestion (exit 64), then parses as usual.
    static func main() async {
        let names = configuration.subcommands.map { $0._commandName } + ["help"]
        if let first = CommandLine.arguments.dropFirst().first, let message = UnknownCommand.message(for: first, among: names) {
            FileHandle.standardError.write(Data((message + "\n").utf8))
            Foundation.exit(64)
        }
        await main(nil)
    }
}
