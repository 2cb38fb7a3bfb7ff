import HTTPTypes
import NIOCore

extension RequestPool {
    /// Registers a transfer (a call whose body its caller reads: ``Session/stream(_:)``, each exchange of a
    /// download), runs `operation` in the caller's task until the head arrives, and keeps the transfer
    /// registered after that, until its ``PoolLease`` ends: when the body has been read, failed, or was dropped.
    ///
    /// A transfer is tracked like any request (snapshot, events, cancel by id, URL, tag or all, drain, its
    /// deadline) but takes no slot under ``SchedulingOptions/maxConcurrentRequests`` or the per-host limit: a
    /// download that runs for an hour would hold it that long, and short requests would queue behind it.
    /// Transfers have limits of their own (``DownloadOptions/connections``, the download manager's concurrency).
    ///
    /// `ended` is told how the transfer ended, once: the status of its head if one came, and the failure if it
    /// failed (before its head, or its body failed or was dropped).
    nonisolated(nonsending) func open<Head>(
        _ call: Call,
        failure: (any Error) -> CourierError,
        ended: @escaping @Sendable (HTTPResponse.Status?, CourierError?) -> Void,
        _ operation: nonisolated(nonsending) (RequestID) async throws -> Head
    )
        async throws -> (head: Head, lease: PoolLease)
    {
        let (id, watcher, started) = state.withLock { state in
            let (id, watcher) = state.register(call, deadline: call.deadline)
            return (id, watcher, state.markRunning(id, coalesced: false))
        }
        if let watcher { Self.watchDeadlines(state, watcher) }
        if let started { broadcaster.yield(.started(started)) }
        let lease = PoolLease(pool: self, id: id, call: call, ended: ended)
        do {
            let head = try await withTaskCancellationHandler {
                try await operation(id)
            } onCancel: {
                leave(id)
            }
            return (head, lease)
        } catch {
            let failure = failure(error)
            lease.end(.failure(failure))
            throw failure
        }
    }

    /// Ends the transfer `id` with `outcome`, as its lease does once.
    nonisolated func endTransfer(_ id: RequestID, _ outcome: Result<HTTPResponse.Status, CourierError>) {
        guard let info = end(id) else { return }  // it left, and was told
        switch outcome {
        case .success(let status): broadcaster.yield(.finished(info, status))
        case .failure(let failure):
            broadcaster.yield(failure.code == .cancelled ? .cancelled(info) : .failed(info, failure))
        }
    }
}

/// A transfer's registration in its ``RequestPool``, held by the body its caller reads: it ends once, when the
/// body ends or fails, or when nothing holds it any more (a body dropped unread counts as cancelled).
final class PoolLease: Sendable {
    private let pool: RequestPool
    let id: RequestID
    /// What the pool's controls and the deadline cancel the transfer through.
    let call: Call
    private let isEnded = Locked(false)
    /// The status the head brought, once it came: reported when the body ends.
    private let status = Locked<HTTPResponse.Status?>(nil)
    /// Told how the transfer ended, once (the call's metrics).
    private let ended: @Sendable (HTTPResponse.Status?, CourierError?) -> Void

    init(
        pool: RequestPool,
        id: RequestID,
        call: Call,
        ended: @escaping @Sendable (HTTPResponse.Status?, CourierError?) -> Void
    ) {
        self.pool = pool
        self.id = id
        self.call = call
        self.ended = ended
    }

    /// Remembers the status of the head the transfer delivers.
    func delivered(_ status: HTTPResponse.Status) {
        self.status.withLock { $0 = status }
    }

    /// The body was read to its end.
    func finish() {
        end(.success(status.withLock { $0 } ?? .ok))
    }

    /// Ends the transfer with `outcome`; later calls do nothing.
    func end(_ outcome: Result<HTTPResponse.Status, CourierError>) {
        let first = isEnded.withLock { ended in
            defer { ended = true }
            return !ended
        }
        guard first else { return }
        pool.endTransfer(id, outcome)
        switch outcome {
        case .success(let status): ended(status, nil)
        case .failure(let failure): ended(status.withLock { $0 } ?? failure.status, failure)
        }
    }

    deinit {
        let unfinished = isEnded.withLock { !$0 }
        guard unfinished else { return }
        call.cancel()  // the exchange stops, and its connection is not left reading for nobody
        end(.failure(.cancelled("the body was dropped before it was read")))
    }
}

/// A transfer's body as its caller reads it: the transport's stream, ending the transfer's ``PoolLease`` when it
/// ends or fails. The pool's controls and the deadline stop it through the lease's call, whose cancel slot holds
/// what stops the exchange until the body has been read. Suspended through the pool, it gives no chunk until it is
/// resumed.
struct LeasedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    private let base: ByteStream
    /// The transport's body, when it can hand its chunks to a sink where they arrive.
    private let sinkable: (any SinkableBody)?
    private let lease: PoolLease
    private let failure: @Sendable (any Error) -> CourierError
    /// How the body is decoded on its way to its reader, when it is.
    private let decoding: StreamDecoding?

    init(
        _ response: TransportResponse,
        lease: PoolLease,
        failure: @escaping @Sendable (any Error) -> CourierError,
        decoding: StreamDecoding?
    ) {
        base =
            decoding.map {
                ByteStream(
                    DecompressedChunks(base: response.body, contentEncoding: $0.contentEncoding, limits: $0.limits)
                )
            } ?? response.body
        self.decoding = decoding
        sinkable = response.sinkable
        self.lease = lease
        self.failure = failure
        lease.delivered(response.status)
    }

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), lease: lease, failure: failure) }

    /// Hands `head`, then the body's chunks, to `sink` (where the transport reads them, when it can), ending the
    /// lease when the body ends or fails. What the sink throws is thrown as a ``SinkFailure``; the transfer ends
    /// failed either way, and its exchange is stopped.
    func deliver(_ head: StreamedResponse, into sink: any ResponseSink) async throws {
        let watched = WatchedSink(sink)
        do {
            try watched.head(head)
            await lease.call.waitWhileSuspended()
            if lease.call.isCancelled { throw CourierError.cancelled() }
            // The caller's task is not suspended on the body as a reader of a sequence is, so its cancellation
            // is passed on here.
            try await withTaskCancellationHandler {
                if let sinkable, let decoding {
                    let decoder = try DecodingSink(watched, decoding: decoding)
                    try await sinkable.deliver(into: decoder, suspension: lease.call)
                    try decoder.finish()
                } else if let sinkable {
                    try await sinkable.deliver(into: watched, suspension: lease.call)
                } else {
                    // Through this body's own iterator: it holds each chunk back while the call is suspended.
                    for try await chunk in self { try watched.write(chunk) }
                }
            } onCancel: {
                lease.call.cancel()
            }
            lease.finish()
        } catch {
            let thrown = watched.thrown
            lease.end(.failure(failure(thrown ?? error)))
            lease.call.cancel()  // nothing reads the rest; a transport that ended already is not told
            if let thrown { throw SinkFailure(thrown: thrown) }
            throw failure(error)
        }
    }

    /// Reads the transport's body, ending the lease at its end or its first error.
    struct Iterator: AsyncIteratorProtocol {
        var base: ByteStream.AsyncIterator
        let lease: PoolLease
        let failure: @Sendable (any Error) -> CourierError

        mutating func next() async throws -> ByteBuffer? {
            do {
                // Suspended through the pool (`suspend(id)`), the reader stops asking for the body, so the
                // transport's backpressure holds the server back until a resume or a cancel.
                await lease.call.waitWhileSuspended()
                if lease.call.isCancelled { throw CourierError.cancelled() }
                guard let chunk = try await base.next() else {
                    lease.finish()
                    return nil
                }
                return chunk
            } catch {
                let ended = failure(error)
                lease.end(.failure(ended))
                throw ended
            }
        }
    }
}

/// A ``ResponseSink`` that remembers what it threw, so the caller gets the sink's own error back.
private final class WatchedSink: ResponseSink {
    private let base: any ResponseSink
    private let failure = Locked<(any Error)?>(nil)

    init(_ base: any ResponseSink) { self.base = base }

    /// What the sink threw, if it did.
    var thrown: (any Error)? { failure.withLock { $0 } }

    func head(_ response: StreamedResponse) throws {
        do { try base.head(response) } catch {
            failure.withLock { $0 = error }
            throw error
        }
    }

    func write(_ chunk: ByteBuffer) throws {
        do { try base.write(chunk) } catch {
            failure.withLock { $0 = error }
            throw error
        }
    }
}

/// What a ``ResponseSink`` threw, on its way out of the call that fed it: its caller gets `thrown` as it was.
struct SinkFailure: Error {
    let thrown: any Error
}
