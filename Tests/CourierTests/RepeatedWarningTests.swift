import Logging
import Testing

@testable import Courier

/// A warning that would repeat on every request: the first time, then at most once per interval with a count.
@Suite("RepeatedWarning")
struct RepeatedWarningTests {
    final class Lines: Sendable {
        let lines = Locked<[String]>([])
    }

    struct Handler: LogHandler {
        let sink: Lines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { sink.lines.withLock { $0.append("\(event.message)") } }
    }

    @Test func logsOnceThenAtMostOncePerIntervalWithHowManyTimesItWasHeldBack() async throws {
        let sink = Lines()
        let logger = Logger(label: "test") { _ in Handler(sink: sink) }
        let warning = RepeatedWarning(interval: .milliseconds(300))
        for _ in 0..<4 { warning.warn(logger, "the jar cannot be written") }
        #expect(sink.lines.withLock { $0 } == ["the jar cannot be written"])
        try await Task.sleep(for: .milliseconds(350))
        warning.warn(logger, "the jar cannot be written")
        #expect(
            sink.lines.withLock { $0.last }
                == "the jar cannot be written (and 3 more times since it was last logged)"
        )
    }
}
