import ArgumentParser
import Courier
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `courier batch FILE`: many requests at once, one status line each in input order, then a summary.
struct BatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Send the requests listed in a file, several at a time.",
        discussion: HelpText.reflow(
            """
            FILE holds one request per line: 'METHOD URL' or just 'URL' (GET); blank lines and '#' comments are
            skipped; '-' reads standard input. Prints '<status> METHOD URL' (or 'ERR METHOD URL: error' when no
            answer came) per request in input order, each as soon as it and every earlier one have ended, then a
            summary. No answer is kept once its line is printed, so any number of requests runs in flat memory. Exits 0 when every request got a 2xx
            answer, 1 otherwise, 64 for a usage error.
            Example:
              courier batch urls.txt --concurrency 16 --fail-fast
              courier batch urls.txt --cache cache-else-network -b jar.txt -c jar.txt
            """
        )
    )

    @Argument(help: "The file listing the requests ('-' for standard input).")
    var file: String

    @Option(help: "Requests in flight at once.")
    var concurrency: Int = 8

    @Flag(help: "Cancel the remaining requests at the first failure.")
    var failFast = false

    @OptionGroup var cache: CacheArguments

    @OptionGroup var connection: ConnectionOptions

    /// `<status> METHOD URL`, or `ERR METHOD URL: error` when no answer came.
    private static func line(_ request: Request<Data>, _ result: Result<Response<Data>, CourierError>) -> String {
        let target = "\(request.method.rawValue) \(Redactor.standard.redact(urlText: request.path))"
        switch result {
        case .success(let response): return "\(response.status.code) \(target)"
        case .failure(let error) where error.code == .httpStatus && error.status != nil:
            return "\(error.status?.code ?? 0) \(target)"  // an answer, not an error: its status, as promised
        case .failure(let error): return "ERR \(target): \(error)"
        }
    }

    func validate() throws {
        if concurrency < 1 || concurrency > 1024 { throw ValidationError("--concurrency must be between 1 and 1024") }
    }

    func run() async throws {
        let command = self
        try await Output.exitOnFailure { try await command.send() }
    }

    private func send() async throws {
        let requests = try CommandLineInput.batchRequests(try CommandLineInput.readText(file))
        let options = BatchOptions(concurrency: concurrency, mode: failFast ? .failFast : .collectAll)
        let start = ContinuousClock.now
        // Statuses are judged here, like `courier get`, so a 404 shows as its status rather than an error.
        var configuration = Configuration { $0.validators = [StatusCodeValidator.successful] }
        try cache.apply(to: &configuration)
        configuration = try connection.configuration(configuration)
        // Each line is printed as soon as its request and every earlier one have ended, and no answer is kept
        // after that: memory stays flat for any number of requests (a bounded window waits for a slow one).
        // Output that cannot be written (a closed pipe) cancels the rest of the batch and ends the command with it.
        let batch = Batch(requests, options: options)
        let outputFailure = Locked<OutputFailure?>(nil)
        let progress = try await withSession(configuration) { session in
            try await session.run(batch, window: max(16, 2 * concurrency)) { index, result in
                guard outputFailure.withLock({ $0 == nil }) else { return }
                do {
                    try Output.stdout(Self.line(requests[index], result))
                } catch {
                    outputFailure.withLock { $0 = error as? OutputFailure }
                    batch.cancel()
                }
            }
        }
        if let failure = outputFailure.withLock({ $0 }) { throw failure }
        let failed = progress.failed
        let seconds = start.duration(to: .now).seconds.fixedText(2)
        Output.stderr(
            "\(requests.count) requests: \(requests.count - failed) succeeded, \(failed) failed in \(seconds) s"
        )
        if failed > 0 { throw ExitCode(1) }
    }
}
