import ArgumentParser
import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// `courier events URL [--json]`: a server-sent event stream, each event printed as it arrives, reconnecting with
/// `Last-Event-ID` as the library does.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print a server-sent event stream (text/event-stream) as it arrives, reconnecting when it drops.",
        discussion: HelpText.reflow(
            """
            Each event is printed as the stream sent it (an id line when the id changes, event and data lines, then a
            blank line; control characters escaped on a terminal), or with --json as one JSON object per line
            ({"id","event","data"} and "retry" when the event set one). When the stream ends or drops, courier says
            so on stderr, waits the server's retry time (or --reconnect-delay; at least 250 ms, doubling after each
            connection in a row that fails or ends within a second) and asks again with Last-Event-ID. It stops
            with exit 0 when the server answers 204, and fails on any other status than 200. Ctrl-C stops it.
            Examples:
              courier events 127.0.0.1:8080/events
              courier events https://api.example.com/stream --json -H 'Authorization: Bearer …'
              courier events 127.0.0.1:8080/events --last-event-id 42 --max-reconnects 5
            """
        )
    )

    @Argument(help: "The URL of the event stream.")
    var url: String

    @Flag(help: "One JSON object per event and line.")
    var json = false

    @Option(name: .customLong("last-event-id"), help: "Resume after this event ID (sent as Last-Event-ID).")
    var lastEventID: String?

    @Option(help: "Seconds to wait before reconnecting until the server sets a retry time (default 3).")
    var reconnectDelay: String?

    @Option(
        help:
            "Give up after this many connections in a row that fail, bring no event or end within a second (default: never)."
    )
    var maxReconnects: Int?

    @Option(help: "The largest event to accept, such as 16M (default 16 MiB); a larger one ends the stream with 63.")
    var maxEventSize: String?

    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if let maxReconnects, maxReconnects < 0 { throw ValidationError("--max-reconnects must be 0 or more") }
    }

    func run() async throws {
        let command = self
        try await Output.exitOnFailure { try await command.stream() }
    }

    private func stream() async throws {
        let configuration = try connection.configuration()
        let target = try UsageError.parsing("URL") { try CommandLineInput.url(url) }
        var request = Request<Data>.get(target.absoluteString)
        request.timeouts = try connection.timeoutOverrides()
        var options = EventStreamOptions(maxReconnects: maxReconnects, lastEventID: lastEventID)
        if let reconnectDelay {
            options.reconnectDelay = try UsageError.parsing("--reconnect-delay") {
                try CommandLineInput.seconds(reconnectDelay)
            }
        }
        if let maxEventSize {
            options.maxEventBytes = try UsageError.parsing("--max-event-size") {
                try CommandLineInput.byteSize(maxEventSize)
            }
        }
        let json = self.json
        let onTerminal = isatty(STDOUT_FILENO) != 0
        try await withSession(configuration) { session in
            var printedID = options.lastEventID ?? ""
            for try await activity in session.events(request, options: options).activity {
                switch activity {
                case .event(let event) where json:
                    try Output.stdoutText(Self.jsonLine(event))
                case .event(let event):
                    try Output.stdoutText(Self.text(event, printedID: &printedID, escaping: onTerminal))
                case .dropped(let drop):
                    Output.stderr(
                        "courier: the event stream dropped (\(drop.error)); again in \(Self.seconds(drop.delay))"
                    )
                case .reconnected:
                    Output.stderr("courier: the event stream reconnected")
                }
            }
        }
    }

    /// The event as an event stream writes it: its id when it differs from `printedID` (which it becomes), the
    /// other fields it has, then a blank line. With `escaping`, control characters become `\xNN`, so a server
    /// cannot move the cursor, set the title or write the clipboard.
    static func text(_ event: ServerSentEvent, printedID: inout String, escaping: Bool) -> String {
        func shown(_ text: some StringProtocol) -> String {
            escaping ? TerminalText.escaped(String(text)) : String(text)
        }
        var text = ""
        if event.id != printedID {
            printedID = event.id
            text += "id: \(shown(event.id))\n"
        }
        if event.event != "message" { text += "event: \(shown(event.event))\n" }
        if let retry = event.retry { text += "retry: \(milliseconds(retry))\n" }
        for line in event.data.split(separator: "\n", omittingEmptySubsequences: false) {
            text += "data: \(shown(line))\n"
        }
        return text + "\n"
    }

    /// A wait as a person reads it: `250 ms`, `3 s`.
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = milliseconds(duration)
        return milliseconds < 1000 ? "\(milliseconds) ms" : "\((Double(milliseconds) / 1000).significantText(3)) s"
    }

    /// A `retry` time as the stream sent it, in whole milliseconds (it came as a count of them, so nothing is lost).
    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// The event as one line of JSON, keys sorted: `{"data":…,"event":…,"id":…,"retry":…}`. Every control
    /// character (C0, DEL and C1) is written as a `\u` escape, so the line is safe on a terminal too.
    static func jsonLine(_ event: ServerSentEvent) -> String {
        var line = "{\"data\":\(JSONText.quoted(event.data)),\"event\":\(JSONText.quoted(event.event))"
        line += ",\"id\":\(JSONText.quoted(event.id))"
        if let retry = event.retry { line += ",\"retry\":\(milliseconds(retry))" }
        return line + "}\n"
    }
}
