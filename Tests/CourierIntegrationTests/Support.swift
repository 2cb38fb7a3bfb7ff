import Courier
import CourierTesting
import Foundation
import Logging
import Testing

/// Runs `body` with a loopback server (speaking HTTPS with `tls`) and a session whose base URL points at it.
func withServerSession<T>(
    tls: TestServer.TLSOptions? = nil,
    transport: (any Transport)? = nil,
    _ configure: (inout Configuration) -> Void = { _ in },
    _ body: (Session, TestServer) async throws -> T
) async throws -> T {
    try await withTestServer(tls: tls) { server in
        var configuration = Configuration { $0.baseURL = server.baseURL }
        configure(&configuration)
        return try await withSession(configuration, transport: transport) { session in
            try await body(session, server)
        }
    }
}

/// The JSON `/echo` answers with.
struct Echo: Decodable, Sendable {
    var method: String
    var path: String
    var uri: String
    var query: [String: String]
    var headers: [String: [String]]
    var body: String
    var bodyLength: Int
    var bodySHA256: String

    func header(_ name: String) -> String? { headers[name.lowercased()]?.first }
}

/// A log handler that keeps every message, to check what Courier logs.
final class CapturedLogs: Sendable {
    /// One message as logged: its level, text and metadata (the handler's and the message's own).
    struct Event: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let lines = Locked<[String]>([])
    private let captured = Locked<[Event]>([])
    var all: String { lines.withLock { $0.joined(separator: "\n") } }
    var events: [Event] { captured.withLock { $0 } }
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    func append(_ event: Event) {
        captured.withLock { $0.append(event) }
        append("\(event.level): \(event.message)")
    }

    func logger() -> Logger {
        Logger(label: "test") { _ in CapturingHandler(sink: self) }
    }
}

struct CapturingHandler: LogHandler {
    let sink: CapturedLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, own in own }
        sink.append(
            CapturedLogs.Event(
                level: event.level,
                message: "\(event.message)",
                metadata: merged.mapValues { "\($0)" }
            )
        )
    }
}

/// What the test server's `/multipart` answers: each part as the server's multipart parser found it, and the body's
/// size on the wire and after its content coding.
struct MultipartAnswer: Decodable {
    struct Part: Decodable {
        var name: String?
        var filename: String?
        var contentType: String?
        var length: Int
        var sha256: String
        var decodedLength: Int?
        var decodedSHA256: String?
    }
    var parts: [Part]
    var receivedBytes: Int
    var decodedBytes: Int
}

/// A new, empty directory under the temporary directory, named `PREFIX-UUID`.
func newTemporaryDirectory(prefix: String) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appending(path: "\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// The figures the Reliability article's table is made from (`Scripts/reliability-report`): with
/// `COURIER_RELIABILITY_DIR` set, a test appends one JSON object per line to `NAME.jsonl` there.
enum ReliabilityFigures {
    static func record(_ name: String, _ figures: [String: any Sendable]) {
        guard let folder = ProcessInfo.processInfo.environment["COURIER_RELIABILITY_DIR"] else { return }
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/" + name + ".jsonl"
        guard let line = try? JSONSerialization.data(withJSONObject: figures, options: [.sortedKeys]) else { return }
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: line + Data("\n".utf8))
    }
}
