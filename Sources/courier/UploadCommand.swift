import ArgumentParser
import Courier
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
            --resumable uploads a file (--data @PATH) with the IETF resumable-upload protocol: after a cut connection
            it asks the server how much it has and sends the rest, and a record beside the file (PATH.courier-upload)
            lets the same command, run again after it was interrupted or killed, go on from there; a file changed in
            the meantime is sent whole.
            Examples:
              courier upload 127.0.0.1:8080/multipart --file photo=@a.jpg --field tag=trip
              courier upload 127.0.0.1:8080/echo --data @logs.json --compress adaptive
              courier upload 127.0.0.1:8080/echo --data @logs.json --method PUT --retries 3
              courier upload 127.0.0.1:8080/echo --data @dump.json --compress target:2M
              courier upload 127.0.0.1:8081/big.iso --data @big.iso --resumable
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

    @Flag(help: "Upload the file of --data @PATH so that it resumes: after a cut connection, and when run again.")
    var resumable = false

    @Flag(help: "With --resumable: check the file's SHA-256 too before resuming (it reads the file once more).")
    var checkDigest = false

    @Option(help: HelpText.limitRate(covering: "every append of a --resumable upload"))
    var limitRate: String?

    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard ["POST", "PUT"].contains(method.uppercased()) else {
            throw ValidationError("--method must be POST or PUT")
        }
        if resumable {
            guard let data, data.hasPrefix("@"), files.isEmpty, fields.isEmpty else {
                throw ValidationError(
                    "--resumable uploads one file: give it as --data @PATH, without --file or --field"
                )
            }
            guard compress == "none", method.uppercased() == "POST" else {
                throw ValidationError(
                    "--resumable sends the file as it is, created with POST: leave out --compress and --method"
                )
            }
        } else if checkDigest || limitRate != nil {
            throw ValidationError("--check-digest and --limit-rate go with --resumable")
        }
    }

    func run() async throws {
        let command = self
        try await Output.exitOnFailure { try await resumable ? command.resumableUpload() : command.upload() }
    }

    /// `--resumable`: the file through ``Session/resumableUpload(_:to:options:)``, its turns on stderr.
    private func resumableUpload() async throws {
        let configuration = try connection.configuration(Configuration { $0.validators = [] })
        let target = try UsageError.parsing("URL") { try CommandLineInput.url(url) }
        let file = URL(filePath: String(data?.dropFirst() ?? ""))
        let rate = try UsageError.parsing("--limit-rate") { try limitRate.map(CommandLineInput.byteRate) }
        let options = ResumableUploadOptions(checksDigest: checkDigest, bytesPerSecond: rate)
        let result = try await withSession(configuration) { session in
            let upload = session.resumableUpload(file, to: target, options: options)
            let printer = ProgressPrinter()
            let shown = Task {
                for await event in upload.events {
                    switch event {
                    case .progress(let progress): printer.show(progress)
                    case .created(let resource): printer.line("upload created at \(resource.absoluteString)")
                    case .resumed(let offset): printer.line("resumed at byte \(offset)")
                    case .startedOver(let reason): printer.line(reason)
                    case .paused: break
                    }
                }
                printer.end()
            }
            defer { shown.cancel() }
            let result = try await upload.result()
            await shown.value
            return result
        }
        Output.stderr("sent \(ByteCount.format(result.bytesSent))")
        guard let response = result.response else {
            Output.stderr("the server has every byte (its answer to the last append was lost)")
            return
        }
        try Output.stdout(response.data)
        Output.stderr("HTTP \(response.status.code)")
        if ExitStatus.isError(status: response.status.code) { throw ExitStatus.httpError.exitCode }
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
        // The session retries and follows redirects itself, sending a file or a form again whole from its
        // first byte; standard input is sent once.
        let response = try await withSession(configuration) { session in
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
        try Output.stdout(response.body)
        Output.stderr("HTTP \(response.status.code)")
        if ExitStatus.isError(status: response.status.code) { throw ExitStatus.httpError.exitCode }
    }
}
