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
            read from stdin is sent as a text message; at the end of stdin courier closes the connection (code 1000)
            and prints what still arrives until the server closes (with -n, it reads no stdin and waits for the
            server to close, or Ctrl-C). Text messages are printed as they came, one per
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
        let printer = try MessagePrinter(json: json, binaryOutput: binaryOutput)
        let lines = noInput ? nil : StandardInputLines()
        try await withSession(configuration) { session in
            let closed = try await session.webSocket(request, options: options) { socket in
                if let drop = socket.previousDrop {
                    Output.stderr("courier: the WebSocket dropped (\(drop)); reconnected")
                }
                return try await Self.exchange(socket, lines: lines, printer: printer)
            }
            if let closed, closed.code != .normalClosure {
                Output.stderr("courier: the WebSocket was \(closed)")
            }
        }
    }

    /// Sends stdin's lines and prints the server's messages until the connection closes; returns how it closed.
    private static func exchange(
        _ socket: WebSocket,
        lines: StandardInputLines?,
        printer: MessagePrinter
    ) async throws -> WebSocketClose? {
        try await withThrowingTaskGroup(of: Void.self) { group in
            if let lines {
                group.addTask {
                    while let line = await lines.next() { try await socket.send(line) }
                    try await socket.close()
                }
            }
            for try await message in socket { try printer.print(message) }
            group.cancelAll()
            return socket.closed
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
