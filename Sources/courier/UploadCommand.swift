import ArgumentParser
import Courier
import Foundation
import HTTPTypes

/// `courier upload`: a multipart form or a raw file, streamed from disk, optionally compressed, with progress.
struct UploadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload",
        abstract: "Upload files as a multipart form or a raw body, streamed from disk, optionally compressed.",
        discussion: HelpText.reflow(
            """
            Files are read from disk while they are sent, so their size does not matter. --compress sends the body
            with Content-Encoding: gzip or deflate, compressed on the fly; adaptive skips what would not shrink,
            target:SIZE picks the fastest setting that fits and fails when none does. Shows progress on stderr,
            prints the server's answer on stdout, and exits 0 on 2xx. With --retries, a transient failure sends the
            whole body again from its first byte; a 307 or 308 redirect (301 and 302 for PUT) is followed with the body
            sent again, up to --max-redirs, but never to another origin.
            Examples:
              courier upload 127.0.0.1:8080/multipart --file photo=@a.jpg --field tag=trip
              courier upload 127.0.0.1:8080/echo --data @logs.json --compress adaptive
              courier upload 127.0.0.1:8080/echo --data @logs.json --method PUT --retries 3
              courier upload 127.0.0.1:8080/echo --data @dump.json --compress target:2M
            """
        )
    )

    @Argument(help: "The URL to send to.")
    var url: String

    @Option(name: .customLong("file"), help: "A file part, name=@PATH. Repeatable.")
    var files: [String] = []

    @Option(name: .customLong("field"), help: "A text field, key=value. Repeatable.")
    var fields: [String] = []

    @Option(help: "A raw body instead of a form: @PATH for a file, or the text itself.")
    var data: String?

    @Option(help: "POST or PUT.")
    var method = "POST"

    @Option(
        help:
            "none, gzip, deflate, gzip:LEVEL, adaptive or target:SIZE (such as target:2M; K, M and G are powers of 1024, KiB, MiB and GiB as sizes are printed)."
    )
    var compress = "none"

    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard ["POST", "PUT"].contains(method.uppercased()) else {
            throw ValidationError("--method must be POST or PUT")
        }
    }

    func run() async throws {
        let command = self
        try await Output.exitOnFailure { try await command.upload() }
    }

    private func upload() async throws {
        let configuration = try connection.configuration(Configuration { $0.validators = [] })
        let target = try UsageError.parsing("URL") { try CommandLineInput.url(url) }
        var request = Request<Data>(method: method.uppercased() == "PUT" ? .put : .post, path: target.absoluteString)
        request.body = try CommandLineInput.uploadBody(files: files, fields: fields, data: data)
        request.timeouts = try connection.timeoutOverrides()
        if let compression = try UsageError.parsing("--compress", { try CommandLineInput.payloadCompression(compress) })
        {
            let decided = try await request.compressingBodyWithDecision(compression)
            request = decided.request
            Output.stderr("\(compression.encoding.rawValue): \(decided.decision)")
        }
        let resend = UploadResend(
            retryPolicy: configuration.retryPolicy as? RetryPolicy,
            redirects: configuration.redirects,
            reporter: configuration.monitors.lazy.compactMap { $0 as? RetryReporter }.first
        )
        let response = try await withSession(configuration) { session in
            try await resend.send(request) { request in
                let upload = try session.upload(request)
                let printer = ProgressPrinter()
                var last: UploadProgress?
                for await progress in upload.progress {
                    printer.show(progress)
                    last = progress
                }
                printer.end()
                let response = try await upload.response
                if let last { Output.stderr("sent \(ByteCount.format(last.completedBytes))") }
                return response
            }
        }
        Output.stdout(response.body)
        Output.stderr("HTTP \(response.status.code)")
        if let status = ExitStatus.of(status: response.status.code) { throw status.exitCode }
    }
}
