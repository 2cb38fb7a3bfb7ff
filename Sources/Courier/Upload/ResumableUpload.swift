import HTTPTypes
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A file uploaded with draft-ietf-httpbis-resumable-upload: created on the server, then appended from wherever
/// the server says it got to after each cut connection, and from a record beside the file after the process
/// itself died. Made by ``Session/resumableUpload(_:to:options:)``; every request it makes goes through the
/// session (its pool, where the upload's requests carry its ``tag``, its headers and credentials).
///
/// ```swift
/// let upload = session.resumableUpload(URL(filePath: "/tmp/big.iso"), to: URL(string: "https://example.com/files")!)
/// for await event in upload.events { print(event) }
/// let result = try await upload.result()
/// ```
public actor ResumableUpload {
    /// The progress and the turns the upload takes, ending when it does.
    public nonisolated let events: AsyncStream<ResumableUploadEvent>
    /// The pool tag of the upload's requests.
    public nonisolated let tag: String

    private let session: Session
    private let file: URL
    private let target: URL
    private let options: ResumableUploadOptions
    private let continuation: AsyncStream<ResumableUploadEvent>.Continuation
    private var run: Task<ResumableUploadResult, any Error>?
    private var isPaused = false
    /// Set by ``cancel()``: the upload is forgotten on the server and its record removed, not kept to resume.
    private var isAbandoned = false
    private var resumeWaiters: [CheckedContinuation<Void, Never>] = []
    private var bytesSent: Int64 = 0
    private var rate = RateMeter()
    private var lastProgress: ContinuousClock.Instant?

    init(session: Session, file: URL, target: URL, options: ResumableUploadOptions) {
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(256))
        tag = "resumable-upload-\(UUID().uuidString)"
        self.session = session
        self.file = file
        self.target = target
        self.options = options
    }

    /// Starts the upload (once); awaiting ``result()`` starts it.
    func start() {
        guard run == nil else { return }
        run = Task { try await self.perform() }
    }

    /// Waits for the upload to end: its result, or its error (``CourierError/Code/cancelled`` after ``cancel()``).
    /// Cancelling the task that waits stops the upload but keeps its record, so running it again (in this process
    /// or another) goes on from where the server got to; ``cancel()`` abandons it.
    public func result() async throws -> ResumableUploadResult {
        start()
        guard let run else { throw CourierError.cancelled() }
        do {
            return try await withTaskCancellationHandler {
                try await run.value
            } onCancel: {
                run.cancel()
            }
        } catch {
            throw CourierError.normalized(error)
        }
    }

    /// Holds the upload back: the request going out is stopped, and nothing more is sent until ``resume()``.
    public func pause() async {
        guard !isPaused else { return }
        isPaused = true
        continuation.yield(.paused)
        _ = await session.pool.cancelAll(tag: tag)
    }

    /// Goes on after ``pause()``, from the server's offset.
    public func resume() {
        isPaused = false
        wake()
    }

    /// Lets the run go on from ``waitWhilePaused()``: resumed, or cancelled.
    private func wake() {
        for waiter in resumeWaiters { waiter.resume() }
        resumeWaiters = []
    }

    /// Abandons the upload: stops it, tells the server to forget it (`DELETE`) and removes the record.
    public func cancel() {
        isAbandoned = true
        start()
        run?.cancel()
        resume()
    }

    private func perform() async throws -> ResumableUploadResult {
        defer { continuation.finish() }
        guard let identity = try UploadRecord.FileIdentity.of(file, digest: options.checksDigest) else {
            throw CourierError(
                code: .unreadableBody,
                message: "cannot read \"\(CourierError.printable(file.path(percentEncoded: false)))\" to upload it"
            )
        }
        var machine = ResumableUploadStateMachine(length: identity.size, maxStartsOver: options.maxFailuresInARow)
        var retries = ResumableUploadRetries(target: target, rule: ResumableUploadRetryRule(options))
        var action = machine.start(resuming: resumableRecord(for: identity))
        let limit = options.bytesPerSecond.map { BandwidthLimit(bytesPerSecond: $0) }
        do {
            while true {
                try Task.checkCancellation()
                try await waitWhilePaused()
                let confirmed = machine.highestConfirmed
                switch action {
                case .create:
                    action = try await create(&machine, identity: identity)
                case .append(let offset):
                    action = try await append(&machine, from: offset, limit: limit)
                case .askOffset:
                    action = try await askOffset(&machine, identity: identity)
                case .retry(let error):
                    switch retries.decide(after: error) {
                    case .wait(let delay):
                        if delay > .zero { try await Task.sleep(for: delay) }
                        retries.slept()
                        action = machine.resuming()
                    case .fail(let error):
                        action = .fail(error)
                    }
                case .startOver(let reason):
                    continuation.yield(.startedOver(reason: reason))
                    UploadRecord.remove(beside: file)
                    action = .create
                case .finished:
                    guard let resource = machine.resource else { throw CourierError.cancelled() }
                    UploadRecord.remove(beside: file)
                    return ResumableUploadResult(resource: resource, response: finalResponse, bytesSent: bytesSent)
                case .fail(let error):
                    throw error
                }
                if machine.highestConfirmed > confirmed { retries.call.progressed() }
            }
        } catch {
            let failure = CourierError.normalized(error)
            if failure.code == .cancelled, isAbandoned, let resource = machine.resource {
                await forget(resource)
            }
            throw failure
        }
    }

    /// The answer to the request that completed the upload, once it came.
    private var finalResponse: ResponseBody?

    private func create(
        _ machine: inout ResumableUploadStateMachine,
        identity: UploadRecord.FileIdentity
    ) async throws
        -> ResumableUploadStateMachine.Action
    {
        let request = Request<Data>(
            method: .post,
            path: target.absoluteString,
            headers: ResumableUploadProtocol.creationFields(length: identity.size)
        )
        do {
            let response = try await session.send(prepared(request))
            let location = response.headers[.location].flatMap { Self.resolve($0, against: target) }
            let next = machine.created(status: response.status, fields: response.headers, location: location)
            if let resource = machine.resource {
                continuation.yield(.created(resource))
                try save(machine, identity: identity)
            }
            return next
        } catch {
            return failed(error, &machine)
        }
    }

    private func append(
        _ machine: inout ResumableUploadStateMachine,
        from offset: Int64,
        limit: BandwidthLimit?
    ) async throws -> ResumableUploadStateMachine.Action {
        guard let resource = machine.resource else { return .create }
        let length = machine.length
        let chunks = FileChunks(url: file, from: offset, to: length)
        let counted = SentChunks(base: chunks, start: offset, total: length, limit: limit) {
            [weak self] position, bytes in
            await self?.sent(bytes, reaching: position, of: length)
        }
        let request = Request<Data>(
            method: .patch,
            path: resource.absoluteString,
            headers: ResumableUploadProtocol.appendFields(offset: offset),
            body: .stream(counted, length: length - offset, contentType: ResumableUploadProtocol.partialUpload)
        )
        do {
            let response = try await session.send(
                prepared(request, resource: resource).timeout(.seconds(7 * 24 * 3600))
            )
            let next = machine.appended(status: response.status, fields: response.headers)
            if next == .finished {
                finalResponse = ResponseBody(status: response.status, headers: response.headers, data: response.body)
            }
            return next
        } catch {
            return failed(error, &machine)
        }
    }

    private func askOffset(
        _ machine: inout ResumableUploadStateMachine,
        identity: UploadRecord.FileIdentity
    )
        async throws -> ResumableUploadStateMachine.Action
    {
        guard let resource = machine.resource else { return .create }
        let request = Request<Data>(
            method: .head,
            path: resource.absoluteString,
            headers: ResumableUploadProtocol.plainFields()
        )
        do {
            let response = try await session.send(prepared(request, resource: resource))
            let next = machine.offsetAnswered(status: response.status, fields: response.headers)
            if case .append(let offset) = next {
                continuation.yield(.resumed(from: offset))
                try save(machine, identity: identity)
            }
            return next
        } catch {
            return failed(error, &machine)
        }
    }

    /// What follows a request that failed: after a ``pause()`` stopped it, asking the server again once resumed;
    /// otherwise what the machine says.
    private func failed(
        _ error: any Error,
        _ machine: inout ResumableUploadStateMachine
    )
        -> ResumableUploadStateMachine.Action
    {
        let failure = CourierError.normalized(error)
        if isPaused, failure.code == .cancelled { return machine.resuming() }
        return machine.failed(failure)
    }

    /// The upload's request as it goes out: its status is the machine's to judge, it is tagged for the pool, and
    /// its body is never sent again by the session (the machine decides what to resend).
    ///
    /// A request to the upload's own URL (`resource`, which the server chose) goes to it as given, without the
    /// session's default parameters; and when the server put the upload on another origin than the target, the
    /// session's credentials stay behind, as they do on a cross-origin redirect.
    private func prepared(_ request: Request<Data>, resource: URL? = nil) -> Request<Data> {
        var request = request.withoutSessionValidators().tag(tag).withoutCoalescing()
        guard let resource else { return request }
        request.includesDefaultParameters = false
        return RedirectState.sameOrigin(resource, target) ? request : request.withoutCredentials()
    }

    /// The record for `identity` when there is one to resume from; a record of another file or target is removed.
    private func resumableRecord(for identity: UploadRecord.FileIdentity) -> URL? {
        guard options.keepsRecord, let record = UploadRecord.load(beside: file) else { return nil }
        guard record.target == target.absoluteString, record.file.matches(identity),
            let resource = URL(string: record.resource)
        else {
            UploadRecord.remove(beside: file)
            continuation.yield(.startedOver(reason: "the file changed since its upload started; it is sent whole"))
            return nil
        }
        return resource
    }

    private func save(_ machine: ResumableUploadStateMachine, identity: UploadRecord.FileIdentity) throws {
        guard options.keepsRecord, let resource = machine.resource else { return }
        let record = UploadRecord(
            target: target.absoluteString,
            resource: resource.absoluteString,
            file: identity,
            confirmed: machine.confirmed
        )
        try record.save(beside: file)
    }

    /// A chunk of `bytes` went out, the upload's data now reaching `position`.
    private func sent(_ bytes: Int, reaching position: Int64, of total: Int64) {
        bytesSent += Int64(bytes)
        let now = ContinuousClock.now
        let perSecond = rate.record(bytesSent, at: now)
        guard position == total || lastProgress.map({ $0.duration(to: now) >= .milliseconds(100) }) ?? true else {
            return
        }
        lastProgress = now
        continuation.yield(
            .progress(UploadProgress(completedBytes: position, totalBytes: total, bytesPerSecond: perSecond))
        )
    }

    private func waitWhilePaused() async throws {
        while isPaused {
            try Task.checkCancellation()
            // The waiter is added before this job suspends, and a cancellation's wake runs on the actor after.
            await withTaskCancellationHandler {
                await withCheckedContinuation { resumeWaiters.append($0) }
            } onCancel: {
                Task { await self.wake() }
            }
        }
    }

    /// Tells the server to forget the upload and removes the record; best effort, since the caller cancelled.
    private func forget(_ resource: URL) async {
        UploadRecord.remove(beside: file)
        let request = Request<Data>(
            method: .delete,
            path: resource.absoluteString,
            headers: ResumableUploadProtocol.plainFields()
        )
        let session = session
        let delete = prepared(request, resource: resource)
        _ = await Task { try? await session.send(delete) }.value
    }

    /// `location` resolved against the URL it answered, when it is an http or https URL.
    private static func resolve(_ location: String, against base: URL) -> URL? {
        guard let url = URL(string: location, relativeTo: base)?.absoluteURL,
            url.scheme == "http" || url.scheme == "https", url.host() != nil
        else { return nil }
        return url
    }
}

/// A file's chunks as an append sends them: each one waits for the rate limit, then is reported.
private struct SentChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    let base: FileChunks
    let start: Int64
    let total: Int64
    let limit: BandwidthLimit?
    /// Told the position reached and the chunk's size.
    let report: @Sendable (Int64, Int) async -> Void

    func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator(), position: start, limit: limit, report: report)
    }

    struct Iterator: AsyncIteratorProtocol {
        let base: FileChunks.Iterator
        var position: Int64
        let limit: BandwidthLimit?
        let report: @Sendable (Int64, Int) async -> Void

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else { return nil }
            try await limit?.take(chunk.readableBytes)
            position += Int64(chunk.readableBytes)
            await report(position, chunk.readableBytes)
            return chunk
        }
    }
}
