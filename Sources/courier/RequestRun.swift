import Courier
import HTTPTypes
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// One run of `get` and its siblings: sends the request, shows the status line (stderr) or the head (`-i`, `-I`,
/// `head`) as the answer starts, so on a terminal they come before the body, writes the body as it arrives, then
/// `-w`'s text (also after a failure), and says which exit status the answer earns. With `--cache` the answer is
/// read whole through the session's cache; otherwise it streams, so any size runs in flat memory.
struct RequestRun {
    let options: RequestSettings
    /// The command's own method (`get` for the bare `courier URL`).
    let command: HTTPRequest.Method

    /// How the answer's body comes: streamed as it arrives (still encoded), or whole through the session (decoded,
    /// perhaps from the cache).
    private enum Delivery {
        case streamed
        case whole(fromCache: Bool)

        var isStreamed: Bool { if case .streamed = self { true } else { false } }
        var isFromCache: Bool { if case .whole(fromCache: true) = self { true } else { false } }
    }

    /// What the answer looked like, for `-w`.
    private struct Answer {
        var head: ResponseHeadText
        var url: URL
        var firstByte: ContinuousClock.Instant
        var receivedBytes: Int64
        /// The call's timing, with the connection that carried it.
        var timing: Timing
    }

    func run() async throws -> ExitStatus {
        let start = ContinuousClock.now
        var configuration = try options.configuration()
        let redirects = RedirectCounter()
        configuration.monitors.append(redirects)
        var request = try options.request(command: command, defaults: configuration.defaultHeaders)
        let limit = try options.show.bodyLimit()
        let writeOut = try options.show.writeOut.map { try WriteOut(argument: $0) }
        let target = try UsageError.parsing("URL") { try CommandLineInput.url(options.url) }
        let path = try options.show.outputPath(for: target)
        let resume = options.show.continueAt != nil ? path.map(CurlResume.init) : nil
        if let range = resume?.range { request.headers[.range] = range }
        let destination = try resume?.destination() ?? path.map(BodyDestination.file) ?? .standardOutput()
        let seenHead = Locked<(head: ResponseHeadText, at: ContinuousClock.Instant)?>(nil)
        let answer: Answer
        do {
            answer = try await withSession(configuration) { session in
                let heads = { (head: ResponseHeadText, delivery: Delivery) throws -> BodyWriter in
                    seenHead.withLock { $0 = (head, .now) }
                    let continues = try resume?.continues(with: head) ?? true
                    return try begin(
                        head,
                        delivery: delivery,
                        destination: continues ? destination : try .file("/dev/null"),
                        limit: limit
                    )
                }
                return options.cache.cache != nil
                    ? try await whole(request, session: session, heads: heads)
                    : try await streamed(request, session: session, heads: heads)
            }
            try destination.finish()
        } catch {
            destination.abandon()
            if let writeOut {
                let seen = seenHead.withLock { $0 }
                let facts = WriteOut.Facts(
                    statusCode: seen?.head.status.code ?? 0,
                    totalSeconds: start.duration(to: .now).seconds,
                    startTransferSeconds: seen.map { start.duration(to: $0.at).seconds } ?? 0,
                    downloadedBytes: 0,
                    effectiveURL: target.absoluteString,
                    redirects: redirects.followed,
                    contentType: seen?.head.headers[.contentType] ?? "",
                    httpVersion: ""
                )
                try? Output.stdoutText(writeOut.text(facts, onTerminal: isatty(STDOUT_FILENO) != 0))
            }
            throw error
        }
        let status = answer.head.status
        if let writeOut {
            var facts = WriteOut.Facts(
                statusCode: status.code,
                totalSeconds: start.duration(to: .now).seconds,
                startTransferSeconds: start.duration(to: answer.firstByte).seconds,
                downloadedBytes: answer.receivedBytes,
                effectiveURL: answer.url.absoluteString,
                redirects: redirects.followed,
                contentType: answer.head.headers[.contentType] ?? "",
                httpVersion: answer.head.version.map { String($0.dropFirst("HTTP/".count)) } ?? ""
            )
            facts.note(answer.timing, since: start)
            try Output.stdoutText(writeOut.text(facts, onTerminal: isatty(STDOUT_FILENO) != 0))
        }
        guard options.show.checkStatus, let checked = ExitStatus.checked(status: status.code) else { return .success }
        if options.show.reportsErrors {
            Output.stderr("courier: warning: HTTP \(status.code) \(status.reasonPhrase)")
        }
        return checked
    }

    private var showsHead: Bool { options.show.include || options.show.headOnly || command == .head }

    /// The answer through ``Session/stream(_:into:)``: the head as soon as it arrives, then each chunk written
    /// where it arrives.
    private func streamed(
        _ request: Request<Data>,
        session: Session,
        heads: @escaping (ResponseHeadText, Delivery) throws -> BodyWriter
    ) async throws -> Answer {
        let sink = WriterSink { head in try heads(head, .streamed) }
        let response = try await session.streamAsSent(request, into: sink)
        let head = ResponseHeadText(version: response.version, status: response.status, headers: response.headers)
        let received = try sink.finish()
        return Answer(
            head: head,
            url: response.url,
            firstByte: sink.firstByte,
            receivedBytes: received,
            timing: response.timing
        )
    }

    /// The answer read whole through ``Session/send(_:)``, so `--cache` can answer it or store it.
    private func whole(
        _ request: Request<Data>,
        session: Session,
        heads: (ResponseHeadText, Delivery) throws -> BodyWriter
    ) async throws -> Answer {
        let response = try await session.send(request)
        let head = ResponseHeadText(version: nil, status: response.status, headers: response.headers)
        var writer = try heads(head, .whole(fromCache: response.isFromCache))
        try writer.write(ByteBuffer(bytes: response.body))
        try writer.finish()
        return Answer(
            head: head,
            url: response.url,
            firstByte: response.timing.firstByte ?? .now,
            receivedBytes: Int64(response.body.count),
            timing: response.timing
        )
    }

    /// The answer has started: fails it under `-f` when it is a 4xx or 5xx (no body is written), shows the status
    /// line or the head, writes `-D`'s file, and returns the writer for the body.
    private func begin(
        _ head: ResponseHeadText,
        delivery: Delivery,
        destination: BodyDestination,
        limit: Int?
    ) throws -> BodyWriter {
        if options.show.fail, ExitStatus.isError(status: head.status.code) {
            throw CourierError.httpStatus(head.status, bodyPreview: nil)
        }
        if let dumpHeader = options.show.dumpHeader {
            try HeaderDump.write(head.text(colours: false, onTerminal: false), to: dumpHeader)
        }
        let style = OutputStyle.choose(options.show.pretty, onTerminal: destination.isTerminal)
        if showsHead {
            try BodyDestination.standardOutput().write(
                head.text(colours: style.colours, onTerminal: isatty(STDOUT_FILENO) != 0)
            )
        } else if !options.show.silent {
            Output.stderr("HTTP \(head.status.code)\(delivery.isFromCache ? " (cache)" : "")")
        }
        let showsProgress = destination.isFile && !options.show.silent && isatty(STDERR_FILENO) != 0
        return try BodyWriter(
            destination: destination,
            headers: head.headers,
            decodes: delivery.isStreamed,
            limit: limit,
            style: style,
            showsProgress: showsProgress
        )
    }
}
