import ArgumentParser
import Courier
import Dispatch
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `courier ws URL`: a WebSocket on the terminal, as websocat and `wscat` are: lines from stdin become text
/// messages, the server's messages go to stdout one per line.
struct WebSocketCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ws",
        abstract: "Talk to a WebSocket: stdin lines go out as text messages, messages come back one per line.",
        discussion: HelpText.reflow(
            """
            The URL may be ws://, wss://, http:// or https:// (or a bare host, as for the other commands). Each line
            read from stdin is sent as a text message; at the end of stdin courier goes on printing what arrives
            until the server has been quiet for --linger seconds (default 1), then closes the connection (code
            1000) and prints what still arrives until the server closes: a server that has received a close sends
            nothing more, so the answers to the last lines come first. With -n it reads no stdin and waits for the
            server to close, or Ctrl-C. -m bounds the whole connection and --read-timeout the server's silence
            after the handshake (exit 28 for either; by default neither). Text messages are printed as they came, one per
            line (control characters escaped on a terminal); binary ones as base64, or appended to --binary-output.
            With --json each message is one JSON object per line: {"type":"text","data":…} or
            {"type":"binary","base64":…}. A close by the server other than 1000 is told on stderr. Exit codes are
            the other commands': 0 once the connection closed, 56 when the server broke the WebSocket protocol, 63
            for a message over --max-message, 28 for a ping left unanswered (--ping), 22 for a refused handshake.
            Examples:
              echo hello | courier ws ws://127.0.0.1:8080/ws/echo
              courier ws wss://chat.example.com/socket --json -H 'Authorization: Bearer …' --ping 20
              courier ws -n ws://127.0.0.1:8080/ws/flood?count=3 --binary-output frames.bin
            """
        )
    )

    @Argument(help: "The WebSocket URL.")
    var url: String

    @Flag(help: "One JSON object per message and line.")
    var json = false

    @Option(help: "Append binary messages to this file instead of printing them as base64.")
    var binaryOutput: String?

    @Flag(
        name: [.customShort("n"), .customLong("no-input")],
        help: "Send nothing: print what the server sends until it closes."
    )
    var noInput = false

    @Flag(help: "Offer permessage-deflate compression.")
    var compress = false

    @Option(help: "Offer this subprotocol (Sec-WebSocket-Protocol); repeat for several, preferred first.")
    var subprotocol: [String] = []

    @Option(help: "Send a ping every this many seconds; no pong within as long ends the connection (exit 28).")
    var ping: String?

    @Option(help: "The largest message to accept, such as 16M (default 1 MiB); a larger one ends with 63.")
    var maxMessage: String?

    @Flag(help: "Reconnect when the connection drops, as --retries allows (at least 3 attempts in a row).")
    var reconnect = false

    @Option(
        help: ArgumentHelp(
            "After stdin ends, close once the server has been quiet this many seconds (default 1; 0 closes at "
                + "once).",
            valueName: "seconds"
        )
    )
    var linger: String?

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let command = self
        try await Output.exitOnFailure { try await command.talk() }
    }

    private func talk() async throws {
        let configuration = try connection.configuration()
        let target = try UsageError.parsing("URL") { try CommandLineInput.url(Session.httpForm(ofWebSocketURL: url)) }
        var request = Request<Data>.get(target.absoluteString)
        request.timeouts = try connection.timeoutOverrides()
        var options = WebSocketOptions(compression: compress, subprotocols: subprotocol, reconnects: reconnect)
        if let ping {
            let interval = try UsageError.parsing("--ping") { try CommandLineInput.seconds(ping) }
            options.keepAlive = .init(interval: interval)
        }
        if let maxMessage {
            options.maxMessageBytes = try UsageError.parsing("--max-message") {
                try CommandLineInput.byteSize(maxMessage)
            }
        }
        let linger = try linger.map { text in
            try UsageError.parsing("--linger") { try CommandLineInput.seconds(text, allowingZero: true) }
        }
        let exchange = Exchange(
            lines: noInput ? nil : StandardInputLines(),
            printer: try MessagePrinter(json: json, binaryOutput: binaryOutput),
            linger: linger ?? .seconds(1),
            silenceLimit: request.timeouts.readIdle
        )
        let (handshake, socketOptions) = (request, options)
        try await Deadline.within(request.timeouts.total) {
            try await withSession(configuration) { session in
                let closed = try await session.webSocket(handshake, options: socketOptions) { socket in
                    if let drop = socket.previousDrop {
                        Output.stderr("courier: the WebSocket dropped (\(drop)); reconnected")
                    }
                    return try await exchange.run(socket)
                }
                if let closed, closed.code != .normalClosure {
                    Output.stderr("courier: the WebSocket was \(closed)")
                }
            }
        }
    }

    /// One connection's talk: stdin's lines go out, the server's messages are printed until the connection
    /// closes.
    private struct Exchange: Sendable {
        let lines: StandardInputLines?
        let printer: MessagePrinter
        /// How long the connection must be quiet after stdin's end before the close goes.
        let linger: Duration
        /// The longest silence of the server after the handshake (`--read-timeout`), or none.
        let silenceLimit: Duration?

        /// What one of the exchange's tasks ended with.
        private enum Outcome: Sendable {
            case closed(WebSocketClose?)
            case sent
        }

        /// Runs until the connection closes; returns how it closed. Fails with a read-idle timeout when the server
        /// is silent past `silenceLimit`.
        func run(_ socket: WebSocket) async throws -> WebSocketClose? {
            let (heard, activity) = (LastActivity(), LastActivity())
            return try await withThrowingTaskGroup(of: Outcome.self) { group in
                group.addTask {
                    for try await message in socket {
                        await heard.now()
                        await activity.now()
                        try printer.print(message)
                    }
                    return .closed(socket.closed)
                }
                if let lines {
                    group.addTask {
                        while let line = await lines.next() {
                            try await socket.send(line)
                            await activity.now()
                        }
                        try await activity.quiet(for: linger)
                        try await socket.close()
                        return .sent
                    }
                }
                if let silenceLimit {
                    group.addTask {
                        try await heard.quiet(for: silenceLimit)
                        throw CourierError.timeout(.readIdle, after: silenceLimit)
                    }
                }
                defer { group.cancelAll() }
                while let outcome = try await group.next() {
                    if case .closed(let close) = outcome { return close }
                }
                return socket.closed
            }
        }
    }
}

/// When a message last went or came (what counts is the caller's).
private actor LastActivity {
    private var last = ContinuousClock.now

    func now() { last = .now }

    /// Returns once no message has gone or come for `duration`.
    func quiet(for duration: Duration) async throws {
        while true {
            let since = ContinuousClock.now - last
            if since >= duration { return }
            try await Task.sleep(for: duration - since)
        }
    }
}

/// Prints messages as `courier ws` shows them.
struct MessagePrinter: Sendable {
    let json: Bool
    let escapes: Bool
    let binaryOutput: BinaryOutput?

    init(json: Bool, binaryOutput path: String?) throws {
        self.json = json
        escapes = isatty(STDOUT_FILENO) != 0
        binaryOutput = try path.map(BinaryOutput.init(path:))
    }

    func print(_ message: WebSocketMessage) throws {
        switch message {
        case .text(let text) where json:
            try Output.stdout("{\"type\":\"text\",\"data\":\(JSONText.quoted(text))}")
        case .text(let text):
            try Output.stdout(escapes ? TerminalText.escaped(text, limit: .max) : text)
        case .binary(let bytes):
            if let binaryOutput { return try binaryOutput.append(bytes) }
            let base64 = Data(bytes.readableBytesView).base64EncodedString()
            try Output.stdout(json ? "{\"type\":\"binary\",\"base64\":\"\(base64)\"}" : base64)
        }
    }
}

/// A file binary messages are appended to, made anew when the command starts.
final class BinaryOutput: Sendable {
    private let descriptor: Int32
    let path: String

    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw OutputFailure(message: "cannot write \(path): \(SystemErrorText.text(of: errno))")
        }
    }

    deinit { close(descriptor) }

    func append(_ bytes: ByteBuffer) throws {
        let failed = bytes.withUnsafeReadableBytes { DescriptorWrite.all($0, to: descriptor) }
        if let failed { throw OutputFailure(message: "cannot write \(path): \(SystemErrorText.text(of: failed))") }
    }
}

/// Lines of stdin, read on a thread of their own (stdin may be a terminal, a pipe or a file, which blocks), one at
/// a time: the reader waits for each line to be taken before it reads the next, so a large file is not read ahead
/// into memory.
final class StandardInputLines: Sendable {
    private let stream: AsyncStream<String>
    private let taken = DispatchSemaphore(value: 0)

    init() {
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.stream = stream
        let taken = self.taken
        DispatchQueue.global().async {
            while let line = readLine(strippingNewline: true) {
                continuation.yield(line)
                taken.wait()
            }
            continuation.finish()
        }
    }

    /// The next line, `nil` at the end of stdin or when the task is cancelled.
    func next() async -> String? {
        var iterator = stream.makeAsyncIterator()
        let line = await iterator.next()
        if line != nil { taken.signal() }
        return line
    }
}
