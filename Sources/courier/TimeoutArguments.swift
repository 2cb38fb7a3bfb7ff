import ArgumentParser
import Courier

/// `--timeout` and `--read-timeout`, as curl splits `--max-time` from `--speed-time`: one bounds the whole exchange,
/// the other each wait for the answer's next bytes.
struct TimeoutArguments: ParsableArguments {
    @Option(help: ArgumentHelp("The longest the whole exchange may take, in seconds: connecting, sending the request and "
                               + "reading the answer to its last byte, redirects and retries included (curl's --max-time). "
                               + "Default: 30; for upload, 7 days.", valueName: "seconds"))
    var timeout: String?

    @Option(help: ArgumentHelp("The longest wait for the next bytes of the answer, in seconds, once the request is sent: "
                               + "raise it for a server that answers only after processing a large upload. Default: 30.",
                               valueName: "seconds"))
    var readTimeout: String?

    /// Sets the request's overrides from the options given.
    func apply<Value>(to request: inout Request<Value>) throws {
        if let timeout { request.timeouts.total = try CommandLineInput.seconds(timeout) }
        if let readTimeout { request.timeouts.readIdle = try CommandLineInput.seconds(readTimeout) }
    }
}
