import HTTPTypes
import NIOCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension Session {
    /// Opens a WebSocket for `request` and runs `body` with it; closes it (code 1000) when `body` returns, with
    /// 1001 (going away) when it throws.
    ///
    /// The handshake is a call like any other: the session's base URL and API version, default headers, cookie
    /// jar, adapters and authenticator (a refused handshake refreshes the credential once, as other calls do), the
    /// host's TLS policy and pins, the proxy (HTTP `CONNECT` or SOCKS5, with credentials), redirects and the retry
    /// rule. The connection then stays in the pool until it ends: ``RequestPool/snapshot()`` lists it,
    /// ``RequestPool/cancel(_:)`` and cancelling by tag close it (1001) and end `body`'s sequence with
    /// ``CourierError/Code/cancelled``, as cancelling the calling task does. The session's total timeout bounds
    /// nothing here: the handshake is bounded by the connect and read-idle timeouts, the open connection by
    /// ``WebSocketOptions/keepAlive`` if set.
    ///
    /// `ws://` and `wss://` URLs are sent as `http://` and `https://`, as RFC 6455 §3 makes them equivalent.
    ///
    /// ```swift
    /// let reply = try await session.webSocket(.get("wss://echo.example.com/")) { socket in
    ///     try await socket.send("ping")
    ///     for try await message in socket {
    ///         if case .text(let text) = message { return text }
    ///     }
    ///     return "closed: \(socket.closed?.description ?? "")"
    /// }
    /// ```
    ///
    /// With ``WebSocketOptions/reconnects``, a connection that drops (no close frame, a reset, a ping left
    /// unanswered, or a server closing with 1001 or 1011–1014) is opened again when the call's retry rule says so,
    /// after its backoff, and `body` runs again with the new connection: its ``WebSocket/connectionNumber`` and
    /// ``WebSocket/previousDrop`` say it is a reconnection, and nothing is sent on it that `body` does not send
    /// again. The rule counts failures in a row, not in all: a connection that delivered a message starts the count
    /// anew, one that dropped before any did not.
    ///
    /// Throws ``CourierError``: ``CourierError/Code/httpStatus`` when the server answered the handshake with
    /// another status (the body's first bytes in ``CourierError/bodyPreview``), ``CourierError/Code/invalidResponse``
    /// for a 101 that breaks RFC 6455 §4.1, what the connection failed with (see ``WebSocket``), or what `body` threw.
    public nonisolated(nonsending) func webSocket<Result: Sendable>(
        _ request: Request<Data>,
        options: WebSocketOptions = WebSocketOptions(),
        _ body: (WebSocket) async throws -> Result
    ) async throws -> Result {
        var request = request
        request.path = Self.httpForm(ofWebSocketURL: request.path)
        let erased = request.erased
        let (executor, known) = try executor(for: erased)
        return try await executor.webSocket(erased, known: known, options: options, body)
    }

    /// `path` with a `ws://` or `wss://` scheme written as `http://` or `https://`.
    package static func httpForm(ofWebSocketURL path: String) -> String {
        let lowered = path.prefix(6).lowercased()
        if lowered.hasPrefix("ws://") { return "http://" + path.dropFirst(5) }
        if lowered.hasPrefix("wss://") { return "https://" + path.dropFirst(6) }
        return path
    }
}

extension RequestExecutor {
    /// A WebSocket call: the handshake through the call's machine and the pool, then `body` with each connection,
    /// reconnecting where the machine and the retry rule say so. One machine for the call's whole life: a drop is
    /// ``CallStateMachine/bodyFailed(_:)`` and the driver goes on from the machine's answer.
    nonisolated(nonsending) func webSocket<Result: Sendable>(
        _ request: ErasedRequest,
        known: ResolvedURL?,
        options: WebSocketOptions,
        _ body: (WebSocket) async throws -> Result
    ) async throws -> Result {
        let start = Tick.now
        let trace = tracer.map { RequestTrace(tracer: $0, method: request.method) }
        var prepared: PreparedRequest
        do {
            prepared = try await begin(request, known: known, start: start, trace: trace)
        } catch {
            let failure = userFacing(error)
            trace?.finished(status: failure.status, error: failure)
            record(status: nil, failure: failure, method: request.method, url: nil, start: start, sentBytes: nil)
            throw failure
        }
        prepared.deadline = .now + Timeouts.noLimit  // the connection may stay open for days
        let call = makeCall(request, prepared: prepared, start: start)
        let retrier =
            request.retryPolicy ?? configuration.retryPolicy ?? (options.reconnects ? RetryPolicy.exponential() : nil)
        retrier?.callWillStart(prepared)
        var machine = CallStateMachine(prepared, hasRetryRule: retrier != nil, deadline: call.deadline)
        let connector = WebSocketConnector(options: options, hostAddresses: configuration.hostAddresses)
        let handshake: nonisolated(nonsending) (PreparedRequest, inout CallStateMachine) async throws -> WebSocketAnswer
        // What the handshakes did, for the monitors when the call ends (the pool's `ended` outlives `machine`), and
        // the messages, while there are monitors to tell.
        let handshakes = Locked(HandshakeRecord())
        let transcript = call.monitors.isEmpty ? nil : WebSocketTranscript()
        handshake = { sending, machine in
            let made = machine.attempt
            handshakes.withLock { $0.attempts = made }
            let answer = try await opening(call, sending, &machine, connector: connector)
            handshakes.withLock { $0.last = answer }
            return answer
        }
        // The handshakes run in the call span's context, so a resend's span (a redirect, a retry, a refreshed
        // credential) is its child; `body` does not (its own requests are not parts of this call).
        var (answer, lease) = try await trace.run {
            try await pool.open(
                call,
                failure: { [self] in timedOut($0, call) },
                ended: { [self] status, failure in
                    let record = handshakes.withLock { $0 }
                    webSocketEnded(
                        call,
                        status: status,
                        failure: failure,
                        trace: trace,
                        handshakes: record,
                        transcript: transcript
                    )
                }
            ) { _ in
                try await drive(call, machine: &machine, from: machine.start(), retrier: retrier, attempt: handshake) {
                    answer,
                    _ in answer?.discard()
                }
            }
        }
        var previousDrop: CourierError?
        var number = 1
        do {
            while true {
                guard let link = answer.link else { throw refusal(answer, call) }
                lease.delivered(.switchingProtocols)
                let outcome = await connected(
                    link,
                    answer,
                    call: call,
                    number: number,
                    previousDrop: previousDrop,
                    serverClosesAsDrops: options.reconnects,
                    transcript: transcript,
                    body
                )
                switch outcome {
                case .finished(let result):
                    _ = machine.bodyEnded()
                    lease.finish()
                    return result
                case .failed(let error):
                    throw error
                case .dropped(let drop):
                    guard options.reconnects else { throw drop }
                    // A connection that delivered a message got somewhere: the drops before it no longer count.
                    if link.ending.deliveredMessages { machine.progressed() }
                    call.log?.retry(prepared, attempt: machine.attempt, delay: .zero, error: drop)
                    let action = machine.asking(retrier, about: prepared, machine.bodyFailed(drop))
                    if case .fail(let error) = action { throw error }
                    previousDrop = drop
                    number += 1
                    answer = try await trace.run {
                        try await drive(
                            call,
                            machine: &machine,
                            from: action,
                            retrier: retrier,
                            after: drop,
                            attempt: handshake
                        ) { answer, _ in answer?.discard() }
                    }
                }
            }
        } catch {
            let failure = Self.normalize(error)
            lease.end(.failure(failure))
            throw error
        }
    }

    /// One handshake: sent as every call's attempt is (cookies, monitors, spans, redirects the machine decides),
    /// stopped through the call's cancel slot.
    private nonisolated(nonsending) func opening(
        _ call: Call,
        _ request: PreparedRequest,
        _ machine: inout CallStateMachine,
        connector: WebSocketConnector
    ) async throws -> WebSocketAnswer {
        let cancellation = TransportCancellation()
        call.install(cancellation)
        defer { call.remove(cancellation) }
        return try await following(call, request, &machine) { outgoing in
            try await connector.open(outgoing, cancellation: cancellation)
        } discard: { answer in
            answer.discard()
        }
    }

    /// The error for a handshake the server answered without switching protocols.
    private func refusal(_ answer: WebSocketAnswer, _ call: Call) -> CourierError {
        let url = Redactor.standard.redact(url: answer.sent?.url ?? call.prepared.url)
        guard answer.status.kind == .successful else {
            return .httpStatus(answer.status, bodyPreview: answer.bodyPreview, url: url)
        }
        return CourierError(
            code: .invalidResponse,
            message: "\(url) answered the WebSocket handshake with HTTP \(answer.status.code), not 101"
        )
    }

    /// How one connection ended for the call.
    private enum ConnectionOutcome<Result> {
        /// `body` returned.
        case finished(Result)
        /// The connection ended under `body` (dropped, closed by the server as a drop, failed on the protocol):
        /// the machine and the retry rule decide whether another opens.
        case dropped(CourierError)
        /// `body` threw an error of its own, or the call was cancelled.
        case failed(any Error)
    }

    /// Runs `body` with the open connection `link`, closes it, and says how it ended.
    private nonisolated(nonsending) func connected<Result: Sendable>(
        _ link: WebSocketLink,
        _ answer: WebSocketAnswer,
        call: Call,
        number: Int,
        previousDrop: CourierError?,
        serverClosesAsDrops: Bool,
        transcript: WebSocketTranscript?,
        _ body: (WebSocket) async throws -> Result
    ) async -> ConnectionOutcome<Result> {
        call.install(link)
        defer { call.remove(link) }
        let response = HTTPResponse(status: answer.status, headerFields: answer.headers)
        do {
            let result = try await withTaskCancellationHandler {
                try await link.channel.executeThenClose(isolation: #isolation) { inbound, outbound in
                    let socket = WebSocket(
                        response: response,
                        link: link,
                        inbound: inbound,
                        outbound: outbound,
                        connectionNumber: number,
                        previousDrop: previousDrop,
                        serverClosesAsDrops: serverClosesAsDrops,
                        transcript: transcript
                    )
                    do {
                        let result = try await body(socket)
                        await Self.closeAndWait(link, outbound, code: .normalClosure)
                        return result
                    } catch {
                        await Self.closeAndWait(link, outbound, code: .goingAway)
                        throw error
                    }
                }
            } onCancel: {
                call.cancel()
            }
            return .finished(result)
        } catch {
            guard let ended = link.ending.error ?? (error as? CourierError).flatMap({ Self.isDrop($0) ? $0 : nil })
            else { return .failed(error) }
            if ended.code == .cancelled || call.isCancelled { return .failed(CourierError.cancelled()) }
            return .dropped(ended)
        }
    }

    /// Whether `error`, thrown by a connection's sequence, means the server ended it in a way worth reconnecting.
    private static func isDrop(_ error: CourierError) -> Bool {
        error.webSocketCloseCode != nil && error.code != .cancelled
    }

    /// Starts the closing handshake unless one began, and waits (at most the close timeout, which the handler
    /// keeps) for the server to end the connection.
    private static func closeAndWait(
        _ link: WebSocketLink,
        _ outbound: NIOAsyncChannelOutboundWriter<WebSocketOutbound>,
        code: WebSocketCloseCode
    ) async {
        if link.ending.ending == nil { try? await outbound.write(.close(code, reason: "")) }
        try? await link.channel.channel.closeFuture.get()
    }

    /// What a call's handshakes did: how many the machine made, and the last answer.
    private struct HandshakeRecord: Sendable {
        var attempts = 0
        var last: WebSocketAnswer?
    }

    /// Reports the call's end, when its last connection ended: to its span, its accessories, the metrics and the
    /// monitors (the last handshake as it went on the wire, its 101 and connection, the messages kept).
    private func webSocketEnded(
        _ call: Call,
        status: HTTPResponse.Status?,
        failure: CourierError?,
        trace: RequestTrace?,
        handshakes: HandshakeRecord,
        transcript: WebSocketTranscript?
    ) {
        let last = handshakes.last
        let attempts = max(handshakes.attempts, 1)
        let outcome: Swift.Result<ResponseBody, CourierError> =
            if let failure { .failure(userFacing(failure)) } else {
                .success(
                    ResponseBody(status: status ?? .switchingProtocols, headers: last?.headers ?? [:], data: Data())
                )
            }
        let timing = Timing(startTick: call.start, firstByteTick: last?.firstByte, endTick: .now, use: last?.connection)
        var sent = call.lastSent(onAttempt: attempts)
        if let last, last.sent?.url == sent.url { sent.headers = last.requestHeaders }
        report(
            CallEnd(
                request: call.request,
                prepared: call.prepared,
                start: call.start,
                outcome: outcome,
                status: status,
                connection: last?.connection,
                monitors: CallEnd.MonitorsEnd(
                    call: call,
                    sent: sent,
                    timing: timing,
                    attempts: attempts,
                    transcript: transcript
                )
            ),
            trace: trace
        )
    }
}
