import ArgumentParser
import Courier
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `courier get|post|put|delete|patch|head URL`: one request; `HTTP <code>` to stderr as the answer starts, then
/// the body to stdout (or `-o`) as it arrives. `get` is also the bare `courier URL`, whose method is curl's default:
/// POST when a body is given.
protocol MethodCommand: AsyncParsableCommand {
    /// The method this subcommand sends.
    static var method: HTTPRequest.Method { get }
    /// The shared request options.
    var options: RequestOptions { get }
}

extension MethodCommand {
    /// The subcommand's name: its method in lower case (`get`), known without building its configuration.
    static var commandName: String { method.rawValue.lowercased() }

    /// The subcommand's name, abstract and example, from its method.
    static func methodConfiguration(example arguments: String) -> CommandConfiguration {
        let name = commandName
        return CommandConfiguration(
            commandName: name,
            abstract: method == .get
                ? "Send a request: GET, or POST when a body is given (-X sets any method)."
                : "Send a \(method.rawValue) request.",
            discussion: "Example:\n  courier \(name) \(arguments)"
        )
    }

    func run() async throws {
        try await Self.run(options.settings)
    }

    /// Sends the request `options` describe with this command's method, read by either reader of the line
    /// (``RequestCommandLine`` reads most lines without swift-argument-parser); what it throws is an `ExitCode`.
    static func run(_ options: RequestSettings) async throws {
        try await Output.exitOnFailure(reportsErrors: options.show.reportsErrors) {
            let status = try await RequestRun(options: options, command: method).run()
            if status != .success { throw status.exitCode }
        }
    }
}

struct Get: MethodCommand {
    static let method = HTTPRequest.Method.get
    static let configuration: CommandConfiguration = methodConfiguration(
        example: "http://127.0.0.1:8080/echo --param q=1 -H 'X-Trace: 7'"
    )
    @OptionGroup var options: RequestOptions
}

struct Post: MethodCommand {
    static let method = HTTPRequest.Method.post
    static let configuration: CommandConfiguration = methodConfiguration(
        example: #"http://127.0.0.1:8080/echo --json '{"a":1}'"#
    )
    @OptionGroup var options: RequestOptions
}

struct Put: MethodCommand {
    static let method = HTTPRequest.Method.put
    static let configuration: CommandConfiguration = methodConfiguration(
        example: "http://127.0.0.1:8080/echo --data-binary @body.bin"
    )
    @OptionGroup var options: RequestOptions
}

struct Delete: MethodCommand {
    static let method = HTTPRequest.Method.delete
    static let configuration: CommandConfiguration = methodConfiguration(
        example: "http://127.0.0.1:8080/echo --param id=3"
    )
    @OptionGroup var options: RequestOptions
}

struct Patch: MethodCommand {
    static let method = HTTPRequest.Method.patch
    static let configuration: CommandConfiguration = methodConfiguration(
        example: #"http://127.0.0.1:8080/echo --json '{"name":"ada"}'"#
    )
    @OptionGroup var options: RequestOptions
}

struct Head: MethodCommand {
    static let method = HTTPRequest.Method.head
    static let configuration: CommandConfiguration = methodConfiguration(example: "http://127.0.0.1:8080/bytes/1000")
    @OptionGroup var options: RequestOptions
}
