import ArgumentParser
import Courier
import Foundation

/// `courier events URL [--json]`: a server-sent event stream, each event printed as it arrives, reconnecting with
/// `Last-Event-ID` as the library does.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print a server-sent event stream (text/event-stream) as it arrives, reconnecting when it drops.",
        discussion: HelpText.reflow(
            """
            Each event is printed as the stream sent it (id, event and data lines, then a blank line), or with --json
            as one JSON object per line ({"id","event","data"} and "retry" when the event set one). When the stream
            ends or drops, courier waits the server's retry time (or --reconnect-delay) and asks again with
            Last-Event-ID. It stops with exit 0 when the server answers 204, and fails on any other status than 200.
            Ctrl-C stops it.
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

    @Option(help: "Give up after this many reconnections in a row that fail or bring no event (default: never).")
    var maxReconnects: Int?

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
        let json = self.json
        try await withSession(configuration) { session in
            for try await event in session.events(request, options: options) {
                try Output.stdoutText(json ? try Self.jsonLine(event) : Self.text(event))
            }
        }
    }

    /// The event as an event stream writes it: the fields it has, then a blank line.
    static func text(_ event: ServerSentEvent) -> String {
        var text = ""
        if !event.id.isEmpty { text += "id: \(event.id)\n" }
        if event.event != "message" { text += "event: \(event.event)\n" }
        if let retry = event.retry { text += "retry: \(milliseconds(retry))\n" }
        for line in event.data.split(separator: "\n", omittingEmptySubsequences: false) { text += "data: \(line)\n" }
        return text + "\n"
    }

    /// A `retry` time as the stream sent it, in whole milliseconds (it came as a count of them, so nothing is lost).
    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// The event as one line of JSON.
    static func jsonLine(_ event: ServerSentEvent) throws -> String {
        struct Line: Encodable {
            var id: String
            var event: String
            var data: String
            var retry: Int64?
        }
        let retry = event.retry.map(milliseconds)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(Line(id: event.id, event: event.event, data: event.data, retry: retry))
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}
