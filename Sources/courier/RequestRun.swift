import Courier
import Foundation
import HTTPTypes
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// One run of `get` and its siblings: sends the request, shows the head when asked (`-i`, `-I`, `head`), writes the
/// body as it arrives, then the status line on stderr and `-w`'s text, and says which exit status the answer
/// earns. With `--cache` the answer is read whole through the session's cache; otherwise it streams, so any size
/// runs in flat memory.
struct RequestRun {
    let options: RequestOptions
    let method: HTTPRequest.Method

    /// What the answer looked like, for the status line and `-w`.
    private struct Answer {
        var head: ResponseHeadText
        var url: URL
        var fromCache: Bool
        var firstByte: ContinuousClock.Instant
        var receivedBytes: Int64
    }

    func run() async throws -> ExitStatus {
        let start = ContinuousClock.now
        var configuration = try options.configuration()
        let redirects = RedirectCounter()
        configuration.monitors.append(redirects)
        let request = try options.request(method: method, defaults: configuration.defaultHeaders)
        let limit = try options.bodyLimit()
        let writeOut = try options.writeOut.map(WriteOut.init)
        let destination = try options.output.map(BodyDestination.file) ?? BodyDestination.standardOutput()
        let answer: Answer
        do {
            answer = try await withSession(configuration) { session in
                if options.cache.cache != nil {
                    try await whole(request, session: session, destination: destination, limit: limit)
                } else {
                    try await streamed(request, session: session, destination: destination, limit: limit)
                }
            }
            try destination.finish()
        } catch {
            destination.abandon()
            throw error
        }
        let status = answer.head.status
        if !options.silent && !showsHead {
            Output.stderr("HTTP \(status.code)\(answer.fromCache ? " (cache)" : "")")
        }
        if let writeOut {
            let facts = WriteOut.Facts(
                statusCode: status.code,
                totalSeconds: start.duration(to: .now).seconds,
                startTransferSeconds: start.duration(to: answer.firstByte).seconds,
                downloadedBytes: answer.receivedBytes,
                effectiveURL: answer.url.absoluteString,
                redirects: redirects.followed,
                contentType: answer.head.headers[.contentType] ?? "",
                httpVersion: answer.head.version.map { String($0.dropFirst("HTTP/".count)) } ?? ""
            )
            try Output.stdoutText(writeOut.text(facts))
        }
        return ExitStatus.of(status: status.code) ?? .success
    }

    private var showsHead: Bool { options.include || options.headOnly || method == .head }

    /// The answer through ``Session/stream(_:into:)``: the head as soon as it arrives, then each chunk written
    /// where it arrives.
    private func streamed(
        _ request: Request<Data>,
        session: Session,
        destination: BodyDestination,
        limit: Int?
    ) async throws -> Answer {
        let sink = WriterSink { head in try start(head, destination: destination, decodes: true, limit: limit) }
        let response = try await session.stream(request, into: sink)
        let head = ResponseHeadText(version: response.version, status: response.status, headers: response.headers)
        let received = try sink.finish()
        return Answer(
            head: head,
            url: response.url,
            fromCache: false,
            firstByte: sink.firstByte,
            receivedBytes: received
        )
    }

    /// The answer read whole through ``Session/send(_:)``, so `--cache` can answer it or store it.
    private func whole(
        _ request: Request<Data>,
        session: Session,
        destination: BodyDestination,
        limit: Int?
    ) async throws -> Answer {
        let response = try await session.send(request)
        let head = ResponseHeadText(version: nil, status: response.status, headers: response.headers)
        var writer = try start(head, destination: destination, decodes: false, limit: limit)
        try writer.write(ByteBuffer(bytes: response.body))
        try writer.finish()
        return Answer(
            head: head,
            url: response.url,
            fromCache: response.isFromCache,
            firstByte: response.timing.firstByte ?? .now,
            receivedBytes: Int64(response.body.count)
        )
    }

    /// Shows the head when asked and returns the writer for the body.
    private func start(
        _ head: ResponseHeadText,
        destination: BodyDestination,
        decodes: Bool,
        limit: Int?
    ) throws -> BodyWriter {
        let style = OutputStyle.choose(options.pretty, onTerminal: destination.isTerminal)
        if showsHead {
            try BodyDestination.standardOutput().write(
                head.text(colours: style.colours, onTerminal: isatty(STDOUT_FILENO) != 0)
            )
        }
        let showsProgress = options.output != nil && !options.silent && isatty(STDERR_FILENO) != 0
        return try BodyWriter(
            destination: destination,
            headers: head.headers,
            decodes: decodes,
            limit: limit,
            style: style,
            showsProgress: showsProgress
        )
    }
}
