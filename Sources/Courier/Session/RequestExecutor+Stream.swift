import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A transfer whose body its caller reads: the call machine up to the head, the pool until the body ends.
extension RequestExecutor {
    /// Sends `request` as a transfer whose body its caller reads (``Session/stream(_:)``, each exchange of a
    /// download): the pool tracks it until the body has been read (``RequestPool/open(_:failure:ended:_:)``),
    /// and the same call machine decides its attempts up to the head (the retry rule, a stale connection, a
    /// credential refresh). Validators and the cache stay out of it: the caller reads the body.
    ///
    /// It is observed as a send is, over its whole life: its trace span, the accessories' stop, the metrics and the
    /// monitors' ``EventMonitor/didComplete(_:result:timing:)`` hear it when the body has been read, has failed, or
    /// was dropped (the outcome's body is empty: the caller read it).
    ///
    /// With a `sink`, the sink gets the head, then each chunk of the body where it arrives (see
    /// ``Session/stream(_:into:)``), and this returns the head once the body has ended.
    ///
    /// The body is decoded as a whole body is (``Configuration/decompressesResponses``), unless `decodesBody` is
    /// false: a download's ranges count the bytes as the server sent them.
    nonisolated(nonsending) func stream(
        _ request: ErasedRequest,
        known: ResolvedURL? = nil,
        into sink: (any ResponseSink)? = nil,
        decodesBody: Bool = true
    ) async throws -> StreamedResponse {
        let start = Tick.now
        let trace = tracer.map { RequestTrace(tracer: $0, method: request.method) }
        var started: PreparedRequest?
        do {
            return try await trace.run {
                try await open(
                    request,
                    known: known,
                    start: start,
                    trace: trace,
                    sink: sink,
                    decodesBody: decodesBody,
                    started: &started
                )
            }
        } catch let error as SinkFailure {
            throw error.thrown  // the sink's own error, as it threw it; the transfer's end reported it
        } catch {
            let failure = userFacing(error)
            if started == nil {  // it never reached the pool, whose end reports the rest
                reportUnprepared(failure, method: request.method, start: start, trace: trace)
            }
            throw failure
        }
    }

    /// Prepares `request` (`started` holds it from then on) and opens it as a transfer, told to its accessories;
    /// the transfer's end reports to the span, the accessories, the metrics and the monitors. With a `sink`, hands
    /// the answer to it and returns when the body has ended.
    private nonisolated(nonsending) func open(
        _ request: ErasedRequest,
        known: ResolvedURL?,
        start: Tick,
        trace: RequestTrace?,
        sink: (any ResponseSink)?,
        decodesBody: Bool,
        started: inout PreparedRequest?
    ) async throws -> StreamedResponse {
        let prepared = try await begin(request, known: known, start: start, trace: trace)
        started = prepared
        let call = makeCall(request, prepared: prepared, start: start)
        let failure: @Sendable (any Error) -> CourierError = { [self] in timedOut($0, call) }
        // what the end reports, once the head has come: the answer and the attempts it took
        let head = Locked<(answer: TransportResponse, attempts: Int)?>(nil)
        let (opened, lease) = try await pool.open(
            call,
            failure: failure,
            ended: { [self] status, failure in  // when the body ends: the duration is the whole transfer's
                transferEnded(call, head: head.withLock { $0 }, status: status, failure: failure, trace: trace)
            }
        ) { _ in
            try await drive(call) { sending, machine in
                try await open(call, sending, machine: &machine, holdingBody: sink != nil)
            } next: { exchanged, _ in  // the stream holds its slot until its body ends
                guard let exchanged else { return }
                do { for try await _ in exchanged.body {} } catch {}  // let the connection be reused
            }
        }
        head.withLock { $0 = opened }
        let response = opened.answer
        let sent = response.sent ?? prepared  // set on every answer the exchange returns
        call.log?.responseHead(response.status, response.headers, for: sent, since: start)
        let decoding =
            decodesBody ? StreamDecoding(response, sent: sent, configuration: configuration) : nil
        let body = LeasedBody(response, lease: lease, failure: failure, decoding: decoding)
        var streamed = StreamedResponse(
            url: sent.url,
            status: response.status,
            headers: response.headers,
            version: response.version,
            body: ByteStream(body),
            isContentDecoded: response.isContentDecoded || decoding != nil,
            timing: Timing(
                startTick: start,
                firstByteTick: response.firstByte,
                endTick: response.firstByte ?? .now,
                use: response.connection
            )
        )
        if decoding != nil {  // the headers describe the body its reader gets
            streamed.headers[.contentEncoding] = nil
            streamed.headers[.contentLength] = nil
        }
        guard let sink else { return streamed }
        streamed.body = .empty
        try await body.deliver(streamed, into: sink)
        return streamed
    }

    /// Reports a transfer's end (``report(_:trace:)``): to its span, its accessories, the metrics, and, when its
    /// head had come (a failure before it was told by the call's driver), the monitors.
    private func transferEnded(
        _ call: Call,
        head: (answer: TransportResponse, attempts: Int)?,
        status: HTTPResponse.Status?,
        failure: CourierError?,
        trace: RequestTrace?
    ) {
        let outcome: Result<ResponseBody, CourierError> =
            if let failure { .failure(userFacing(failure)) } else {
                .success(ResponseBody(status: status ?? .ok, headers: head?.answer.headers ?? [:], data: Data()))
            }
        let monitors = head.map { head in
            CallEnd.MonitorsEnd(
                call: call,
                sent: head.answer.sent ?? call.prepared,
                timing: Timing(
                    startTick: call.start,
                    firstByteTick: head.answer.firstByte,
                    endTick: .now,
                    use: head.answer.connection
                ),
                attempts: head.attempts
            )
        }
        report(
            CallEnd(
                request: call.request,
                prepared: call.prepared,
                start: call.start,
                outcome: outcome,
                status: status,
                connection: head?.answer.connection,
                sentBytes: call.prepared.body.length,
                monitors: monitors
            ),
            trace: trace
        )
    }
}
