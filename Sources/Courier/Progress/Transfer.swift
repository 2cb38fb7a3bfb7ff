/// A call in flight whose progress is reported both ways: the body received (and the one sent, when there is one)
/// as `AsyncSequence`s, its response, and a way to cancel it (the seeds' progress callback on any call). Made by
/// ``Session/transfer(_:)``.
///
/// ```swift
/// let transfer = try session.transfer(Request<Data>.get("/reports/2026.csv"))
/// Task { for await progress in transfer.downloadProgress { print(progress) } }   // at most ten a second
/// let report = try await transfer.response
/// ```
public struct Transfer<Value: Sendable>: Sendable {
    /// The response body as it arrives (bytes on the wire, towards the length the head declares), at most about
    /// ten values a second and then the last; a redirect or a retry starts it again from zero. It ends with the
    /// call; a call the cache answers reports nothing.
    public let downloadProgress: AsyncStream<TransferProgress>
    /// The request body as it goes out, as ``Upload/progress`` reports it; it ends at once for a call without one.
    public let uploadProgress: AsyncStream<TransferProgress>
    private let task: Task<Response<Value>, any Error>

    init(
        downloadProgress: AsyncStream<TransferProgress>,
        uploadProgress: AsyncStream<TransferProgress>,
        task: Task<Response<Value>, any Error>
    ) {
        self.downloadProgress = downloadProgress
        self.uploadProgress = uploadProgress
        self.task = task
    }

    /// The server's answer; throws ``CourierError`` (``CourierError/Code/cancelled`` after ``cancel()``).
    public var response: Response<Value> {
        get async throws {
            do { return try await task.value } catch { throw RequestExecutor.normalize(error) }
        }
    }

    /// Stops the call; the transport closes the connection.
    public func cancel() { task.cancel() }
}

extension Session {
    /// Starts sending `request` as ``send(_:)`` does and returns at once with a ``Transfer`` that reports the
    /// progress of the body received and, when the request has one, of the body sent.
    ///
    /// The call makes its own exchange, shared with no identical call (coalescing would hand it a body it did
    /// not watch arrive). A request with a body is sent as ``upload(_:)`` sends it: streamed as it is counted, and
    /// sent again whole (counted again from zero) on a retry, a 307 or 308 redirect or a credential refresh when
    /// it can be read again from the start: bytes, a file, a form of those, or a stream made `replayable`.
    public nonisolated func transfer<Value>(_ request: Request<Value>) throws -> Transfer<Value> {
        let received = ProgressMeter(total: nil)
        var call = request.withoutCoalescing()
        let sendsBody = !request.body.isEmpty
        let sent: ProgressMeter
        if !sendsBody {
            sent = ProgressMeter(total: 0)
            sent.finish()
        } else {
            let prepared = try request.body.prepare()
            sent = ProgressMeter(total: prepared.length)
            call.body = .stream(
                CountedChunks(base: prepared.chunks(), meter: sent, total: prepared.length),
                length: prepared.length,
                contentType: request.body.contentType,
                replayable: prepared.isReplayable
            )
        }
        let downloadProgress = received.updates.subscribe()
        let uploadProgress = sent.updates.subscribe()
        let task = Task { [call] in
            defer {
                received.finish()
                if sendsBody { sent.finish() }
            }
            return try await ProgressMeter.$receiving.withValue(received) { try await send(call) }
        }
        return Transfer(downloadProgress: downloadProgress, uploadProgress: uploadProgress, task: task)
    }
}
