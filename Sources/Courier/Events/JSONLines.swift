import HTTPTypes
import NIOCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension Session {
    /// The JSON values of `request`'s body, one per line (JSON lines, NDJSON), decoded as they arrive: a slow
    /// consumer slows the reads and memory holds one line at a time. Blank lines are skipped; a line that does not
    /// decode ends the sequence with ``CourierError/Code/decoding``, one longer than `maxLineBytes` with
    /// ``CourierError/Code/bodyTooLarge``, and a status other than 2xx with ``CourierError/Code/httpStatus``.
    ///
    /// The call is a call like any other up to its head (pool, authenticator, retry rule); a dropped connection
    /// ends the sequence with its error, since a JSON-lines stream has no way to resume.
    ///
    /// ```swift
    /// struct Tick: Decodable, Sendable { var n: Int }
    /// for try await tick in session.jsonLines(Request<Data>.get("/jsonl"), as: Tick.self) { print(tick.n) }
    /// ```
    public nonisolated func jsonLines<Value: Decodable>(
        _ request: Request<Data>,
        as type: Value.Type = Value.self,
        decoder: JSONDecoder = JSONDecoder(),
        maxLineBytes: Int = 1 << 20
    ) -> JSONLines<Value> {
        JSONLines(session: self, request: request, decoder: decoder, maxLineBytes: maxLineBytes)
    }
}

/// The decoded lines of one JSON-lines body: what ``Session/jsonLines(_:as:decoder:maxLineBytes:)`` returns. Each
/// iteration makes the request anew.
public struct JSONLines<Value: Decodable>: AsyncSequence, Sendable {
    /// Each element is one line's value.
    public typealias Element = Value

    let session: Session
    let request: Request<Data>
    let decoder: JSONDecoder
    let maxLineBytes: Int

    /// Sends the request on the first call to `next()`.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(reader: JSONLinesReader(lines: self))
    }

    /// Reads the body; dropping it closes the connection.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let reader: JSONLinesReader<Value>

        /// The next value, `nil` at the end of the body, or throws the ``CourierError`` that ended it.
        public mutating func next() async throws -> Value? {
            try await reader.next()
        }
    }
}

/// One iteration of a JSON-lines body. Owned by one iterator and used by one task at a time.
final class JSONLinesReader<Value: Decodable> {
    private let lines: JSONLines<Value>
    private var splitter: LineSplitter
    private var ready: [[UInt8]] = []
    private var readyIndex = 0
    private var body: ByteStream.AsyncIterator?
    private var hasStarted = false
    private var isFinished = false

    init(lines: JSONLines<Value>) {
        self.lines = lines
        self.splitter = LineSplitter(maxLineBytes: lines.maxLineBytes)
    }

    func next() async throws(CourierError) -> Value? {
        while true {
            while readyIndex < ready.count {
                let line = ready[readyIndex]
                readyIndex += 1
                guard line.contains(where: { !Self.isWhitespace($0) }) else { continue }
                return try decode(line)
            }
            ready.removeAll(keepingCapacity: true)
            readyIndex = 0
            if isFinished { return nil }
            if !hasStarted { try await start() }
            do {
                guard let chunk = try await body?.next() else {
                    isFinished = true
                    body = nil
                    if let last = splitter.finish() { ready.append(last) }
                    continue
                }
                try splitter.split(chunk.readableBytesView, into: &ready)
            } catch {
                isFinished = true
                body = nil
                throw CourierError.normalized(error)
            }
        }
    }

    private func start() async throws(CourierError) {
        hasStarted = true
        var request = lines.request
        if request.headers[.accept] == nil {
            request.headers[.accept] = "application/jsonl, application/x-ndjson, application/json"
        }
        let response: StreamedResponse
        do {
            response = try await lines.session.streamWithinLimits(request, boundsLength: false)
        } catch {
            isFinished = true
            throw CourierError.normalized(error)
        }
        guard (200..<300).contains(response.status.code) else {
            isFinished = true
            throw response.statusError
        }
        body = response.body.makeAsyncIterator()
    }

    private func decode(_ line: [UInt8]) throws(CourierError) -> Value {
        do {
            return try lines.decoder.decode(Value.self, from: Data(line))
        } catch {
            isFinished = true
            body = nil
            throw CourierError(
                code: .decoding,
                message: "a JSON line did not decode as \(Value.self)",
                underlying: error
            )
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }
}
