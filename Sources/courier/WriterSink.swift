import Courier
import NIOCore

/// Writes a streamed answer's body where it arrives (with the default transport, on the event loop that reads the
/// connection, so no chunk waits for a task to be woken): the head makes the ``BodyWriter``, each chunk goes to it.
///
/// `@unchecked Sendable`: the session calls a sink from one exchange at a time, one call after another
/// (``ResponseSink``'s promise), and ``finish()`` runs once the delivery has returned, which the session orders
/// after the last write.
final class WriterSink: ResponseSink, @unchecked Sendable {
    private let makeWriter: (ResponseHeadText) throws -> BodyWriter
    private var writer: BodyWriter?
    /// When the head arrived.
    private(set) var firstByte: ContinuousClock.Instant = .now

    init(_ makeWriter: @escaping (ResponseHeadText) throws -> BodyWriter) {
        self.makeWriter = makeWriter
    }

    func head(_ response: StreamedResponse) throws {
        firstByte = .now
        writer = try makeWriter(
            ResponseHeadText(version: response.version, status: response.status, headers: response.headers)
        )
    }

    func write(_ chunk: ByteBuffer) throws {
        try writer?.write(chunk)
    }

    /// Ends the body (see ``BodyWriter/finish()``); returns the bytes received.
    func finish() throws -> Int64 {
        guard var writer else { return 0 }
        try writer.finish()
        return writer.receivedBytes
    }
}
