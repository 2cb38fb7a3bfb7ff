import ArgumentParser
import Courier
import Foundation
import HTTPTypes

/// `courier get|post|put|delete|patch|head URL`: one request; the body to stdout, `HTTP <code>` to stderr.
enum MethodCommand {
    static func run(_ method: HTTPRequest.Method, _ options: RequestOptions) async throws {
        try await Output.exitOnFailure {
            let request = try options.request(method: method)
            let response = try await withSession(options.configuration()) { session in try await session.send(request) }
            if let path = options.output {
                try Output.writeAtomically(response.body, to: path)
            } else {
                Output.stdout(response.body)
            }
            Output.stderr("HTTP \(response.status.code)\(response.isFromCache ? " (cache)" : "")")
            if !(200..<300).contains(response.status.code) {
                throw ExitCode(response.status.code >= 500 ? 5 : 4)
            }
        }
    }

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "get", abstract: "Send a GET request.",
                                                        discussion: "Example: courier get http://127.0.0.1:8080/echo --param q=1 -H 'X-Trace: 7'")
        @OptionGroup var options: RequestOptions
        func run() async throws { try await MethodCommand.run(.get, options) }
    }

    struct Post: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "post", abstract: "Send a POST request.",
                                                        discussion: "Example: courier post http://127.0.0.1:8080/echo --json '{\"a\":1}'")
        @OptionGroup var options: RequestOptions
        func run() async throws { try await MethodCommand.run(.post, options) }
    }

    struct Put: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "put", abstract: "Send a PUT request.",
                                                        discussion: "Example: courier put http://127.0.0.1:8080/echo --form name=ada")
        @OptionGroup var options: RequestOptions
        func run() async throws { try await MethodCommand.run(.put, options) }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Send a DELETE request.",
                                                        discussion: "Example: courier delete http://127.0.0.1:8080/echo --param id=3")
        @OptionGroup var options: RequestOptions
        func run() async throws { try await MethodCommand.run(.delete, options) }
    }

    struct Patch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "patch", abstract: "Send a PATCH request.",
                                                        discussion: "Example: courier patch http://127.0.0.1:8080/echo --json '{\"name\":\"ada\"}'")
        @OptionGroup var options: RequestOptions
        func run() async throws { try await MethodCommand.run(.patch, options) }
    }

    struct Head: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "head", abstract: "Send a HEAD request.",
                                                        discussion: "Example: courier head http://127.0.0.1:8080/bytes/1000 -v")
        @OptionGroup var options: RequestOptions
        func run() async throws { try await MethodCommand.run(.head, options) }
    }
}
