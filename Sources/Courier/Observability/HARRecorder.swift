#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// An event monitor that writes every finished call to a HAR 1.2 file, which browsers' developer tools, Charles,
/// Proxyman and HAR viewers open.
///
/// Each call gives an entry for each redirect it followed (status, headers, `redirectURL`, the hop's own timings)
/// and one for its final request and its answer or failure, timed from the last redirect's end: headers and URL with
/// credentials hidden as ``Redactor`` hides them in the log, bodies up to ``bodyLimit`` bytes (text redacted too,
/// other bytes in base64), the timings ``Timing`` has (see <doc:WhereTheTimeWent>), the server's IP address and the
/// connection's number. A streamed answer (``Session/stream(_:)``, a download) is read by its caller, so its entry
/// has the head but no body.
///
/// Entries are written as calls finish, so memory stays flat however many there are, into a temporary file beside
/// the target; ``finish()`` completes the log and renames it into place, so the target is a whole HAR file or is
/// not there. A symbolic link is written through, and a path that names no regular file (`/dev/null`, a pipe,
/// `/dev/stdout`) is written to directly.
///
/// ```swift
/// let har = try HARRecorder(url: URL(filePath: "run.har"))
/// try await withSession(Configuration { $0.monitors.append(har) }) { session in
///     _ = try await session.send(Request<Data>.get("https://example.com/"))
/// }
/// try har.finish()
/// ```
public final class HARRecorder: EventMonitor {
    /// The most bytes of each body an entry carries.
    public let bodyLimit: Int
    private let redactor: Redactor
    private let file: Locked<Output>

    /// Where entries go, and how many went.
    private struct Output {
        var writer: AtomicFile.Writer?
        var entries = 0
        /// The first failure to write, reported by ``finish()``.
        var failure: CourierError?
    }

    /// Starts a log that ``finish()`` will put at `url`, with bodies up to `bodyLimit` bytes and what `redactor`
    /// hides hidden. Throws ``CourierError`` (``CourierError/Code/fileAccess``) when the folder cannot take the file.
    public init(url: URL, bodyLimit: Int = 64 * 1024, redactor: Redactor = .standard) throws {
        self.bodyLimit = bodyLimit
        self.redactor = redactor
        let writer: AtomicFile.Writer
        do {
            writer = try AtomicFile.Writer(for: url, permissions: 0o600, userNamed: true)
            try writer.append(Data(Self.head.utf8))
        } catch {
            throw Self.failure(url, error)
        }
        file = Locked(Output(writer: writer))
        self.url = url
    }

    /// Where the log goes.
    public let url: URL

    /// How many entries have been written.
    public var entries: Int { file.withLock { $0.entries } }

    /// Writes the call's entries: one for each redirect it followed, then its final request's.
    public func didFinish(with message: DebugMessage) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let entries = HAREntry.entries(message, bodyLimit: bodyLimit, redactor: redactor)
        let encoded = entries.compactMap { try? encoder.encode($0) }
        guard encoded.count == entries.count else { return }
        file.withLock { output in
            guard let writer = output.writer, output.failure == nil else { return }
            do {
                for json in encoded {
                    try writer.append(Data((output.entries == 0 ? "\n" : ",\n").utf8) + json)
                    output.entries += 1
                }
            } catch {
                output.failure = Self.failure(url, error)
            }
        }
    }

    /// Completes the log and renames it into place. Entries of calls that finish later are dropped. Throws
    /// ``CourierError`` when an entry or the file could not be written; then no file is left at ``url``.
    public func finish() throws {
        let (writer, failure) = file.withLock { output in
            defer { output.writer = nil }
            return (output.writer, output.failure)
        }
        guard let writer else { return }
        do {
            if let failure { throw failure }
            try writer.append(Data(Self.tail.utf8))
        } catch {
            writer.abandon()
            throw Self.failure(url, error)
        }
        do { try writer.commit() } catch {
            throw Self.failure(url, error)  // the commit removed the temporary file
        }
    }

    deinit {
        file.withLock { $0.writer?.abandon() }
    }

    private static let head =
        #"{"log":{"version":"1.2","creator":{"name":"Courier","version":"\#(Courier.version)"},"entries":["#
    private static let tail = "\n]}}\n"

    private static func failure(_ url: URL, _ error: any Error) -> CourierError {
        if let error = error as? CourierError { return error }
        return CourierError(
            code: .fileAccess,
            message: "cannot write the HAR file \(url.path(percentEncoded: false))",
            underlying: error
        )
    }
}
