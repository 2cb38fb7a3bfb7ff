import NIOCore

/// An upload in flight: its progress as an `AsyncSequence`, its response, and a way to cancel it. Made by
/// ``Session/upload(_:)``.
///
/// ```swift
/// let upload = try session.upload(Request<Data>.post("/files", body: .file(big)))
/// for await progress in upload.progress { print(progress) }   // at most ten a second, then the last
/// let response = try await upload.response
/// ```
public struct Upload<Value: Sendable>: Sendable {
    /// Progress from the first byte to the last, at most about ten values a second; it ends when the body
    /// has been sent or the upload stops.
    public var progress: AsyncStream<UploadProgress> { transfer.uploadProgress }
    /// The call, whose download progress an upload does not show.
    private let transfer: Transfer<Value>

    init(_ transfer: Transfer<Value>) { self.transfer = transfer }

    /// The server's answer; throws ``CourierError`` (``CourierError/Code/cancelled`` after ``cancel()``).
    public var response: Response<Value> {
        get async throws { try await transfer.response }
    }

    /// Stops the upload; the transport closes the connection.
    public func cancel() { transfer.cancel() }
}

extension Session {
    /// Starts sending `request` and returns at once with an ``Upload`` that reports how many body bytes have
    /// gone out: a ``transfer(_:)`` that shows the sending side. The body is streamed (files are read from disk as
    /// the connection accepts them). A body that can be read again from the start (bytes, a file, a form of
    /// those, a stream made `replayable`) is sent again whole on a retry, a 307 or 308 redirect or a credential
    /// refresh, and its progress starts again from zero; a one-pass stream is sent once.
    ///
    /// Unless the request sets its own total timeout, an upload may take up to seven days (URLSession's resource
    /// timeout), since the session's total is sized for ordinary requests; the read-idle timeout still ends a
    /// stalled one.
    public nonisolated func upload<Value>(_ request: Request<Value>) throws -> Upload<Value> {
        var upload = request
        if upload.timeouts.total == nil { upload.timeouts.total = Self.uploadTotalTimeout }
        return Upload(try transfer(upload))
    }
}

extension Session {
    /// The total timeout of an upload whose request does not set one.
    static let uploadTotalTimeout = Duration.seconds(7 * 86_400)
}

/// A body's chunks, cut to at most 1 MiB so progress moves smoothly, each counted as the transport takes it.
/// Each iteration (the body sent again) counts from zero.
struct CountedChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: ByteStream
    let meter: ProgressMeter
    let total: Int64?

    func makeAsyncIterator() -> Iterator {
        meter.start(total: total)
        return Iterator(base: base.makeAsyncIterator(), meter: meter)
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: ByteStream.AsyncIterator
        let meter: ProgressMeter
        var current: ByteBuffer?

        mutating func next() async throws -> ByteBuffer? {
            while true {
                if var buffer = current, buffer.readableBytes > 0,
                    let slice = buffer.readSlice(length: Swift.min(PreparedBody.chunkSize, buffer.readableBytes))
                {
                    current = buffer
                    meter.add(slice.readableBytes)
                    return slice
                }
                guard let next = try await base.next() else { return nil }
                current = next
            }
        }
    }
}
