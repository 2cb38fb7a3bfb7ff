import CoreMetrics
import HTTPTypes
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One exchange on the wire: the request sent, redirects followed, the answer read.
extension RequestExecutor {
    /// Sends `request` (the call's request as this attempt signs it), following the redirects `machine` decides,
    /// and reads each answer's body whole where it arrives; the pool bounds the exchange by the call's deadline,
    /// through the call. A cancellation at the deadline is thrown as the total timeout here, inside the call, so
    /// requests sharing it hear the timeout too.
    nonisolated(nonsending) func exchange(
        _ call: Call,
        _ request: PreparedRequest,
        _ machine: inout CallStateMachine
    ) async throws -> ResponseBody {
        let reading = BodyReading(
            limits: call.limits,
            decompresses: configuration.decompressesResponses,
            meter: ProgressMeter.receiving
        )
        do {
            let answer = try await following(call, request, &machine) { outgoing in
                try await wholeBodyFetch.fetch(outgoing, reading: reading, call: call)
            } discard: { _ in
            }
            call.log?.response(answer, for: answer.sent ?? request, since: call.start)
            return answer
        } catch {
            throw timedOut(error, call)
        }
    }

    /// Sends `request` (the call's request as this attempt signs it), following the redirects `machine` decides,
    /// and returns the final response with its body still arriving; the transport bounds the exchange by the
    /// call's deadline. It runs in the caller's task: the call stops it through the exchange's
    /// ``TransportCancellation``, which stays in the call's cancel slot when the head has come, so the pool's
    /// controls and the deadline reach the body too.
    ///
    /// With `holdingBody`, a transport that can (``BodyHoldingTransport``) reads no chunk of a body until it is
    /// first iterated or handed to a ``ResponseSink``.
    nonisolated(nonsending) func open(
        _ call: Call,
        _ request: PreparedRequest,
        machine: inout CallStateMachine,
        holdingBody: Bool = false
    ) async throws -> TransportResponse {
        // One for the redirects too: each exchange registers what stops it in place of the one before.
        let cancellation = TransportCancellation()
        call.install(cancellation)
        let holding = holdingBody ? transport as? any BodyHoldingTransport : nil
        do {
            return try await following(call, request, &machine) { outgoing in
                if let holding {
                    return try await holding.send(outgoing, cancellation: cancellation, holdingBody: true)
                }
                return try await transport.send(outgoing, cancellation: cancellation)
            } discard: { response in
                for try await _ in response.body {}  // let the connection be reused
            }
        } catch {
            call.remove(cancellation)
            throw error
        }
    }

    /// Sends `request` with `send`, following the redirects the call's `machine` decides (each 3xx is an event it
    /// answers; `discard` lets a followed redirect's answer go), and returns the attempt's answer, noted with the
    /// request as finally sent and when its head arrived. Inlined into its two callers, so the answer reaches them
    /// without a frame of its own and `send` runs in theirs.
    @inline(__always)
    nonisolated(nonsending) func following<Answer: ResponseHead>(
        _ call: Call,
        _ request: PreparedRequest,
        _ machine: inout CallStateMachine,
        send: nonisolated(nonsending) (PreparedRequest) async throws -> Answer,
        discard: nonisolated(nonsending) (Answer) async throws -> Void
    ) async throws -> Answer {
        var current = request
        var opened = 0  // connections opened by the redirects before this exchange and by it
        while true {
            // Each step a request does without (cookies, tracing, waiting for connectivity) is skipped here, not
            // entered: every async call copies the request into a frame of its own.
            var sending = current
            if configuration.cookieJar != nil { await addCookies(to: &sending, handling: call.cookies) }
            let resend = tracer.flatMap { ResendSpan.start($0, for: sending) }
            if let tracer { sending.addTraceContext(tracer: tracer, span: resend) }
            // A hop's start, read only for the monitors' record of redirects.
            let sentAt: Tick? = call.monitors.isEmpty ? nil : .now
            for monitor in call.monitors { monitor.willSend(sending) }
            call.log?.request(sending)
            var answer: Answer
            do {
                answer =
                    if configuration.waitsForConnectivity == nil {
                        try await send(sending)
                    } else {
                        try await waitingForConnectivity(sending, call: call) { try await send(sending) }
                    }
            } catch {
                if let resend { RequestTrace.finish(resend, status: nil, error: Self.normalize(error)) }
                throw error
            }
            if let resend {
                RequestTrace.finish(resend, status: answer.status, error: nil, connection: answer.connection)
            }
            answer.firstByte = .now
            opened += answer.connection?.opened ?? 0
            answer.connection?.opened = opened
            for monitor in call.monitors { monitor.didSend(sending) }
            if configuration.cookieJar != nil {
                await storeCookies(from: answer.headers, for: sending.url, handling: call.cookies)
            }
            guard answer.status.kind == .redirection else {
                answer.sent = current
                return answer
            }
            let action = try machine.redirected(
                current,
                status: answer.status,
                location: answer.value(of: .location),
                under: configuration.redirects
            )
            switch action {
            case .deliver:
                answer.sent = current
                return answer
            case .follow(let method, let url, let dropsBody, let stripsCredentials):
                call.log?.redirect(from: current, status: answer.status, to: url)
                for monitor in call.monitors { monitor.willRedirect(current, status: answer.status, to: url) }
                try await discard(answer)
                current.method = method
                current.url = url
                current.route(under: configuration, own: call.request.tls, on: call.prepared.url.host())
                if dropsBody {
                    current.body = .empty
                    current.headers[.contentType] = nil
                    current.headers[.contentLength] = nil
                }
                if stripsCredentials {
                    for name in configuration.redirects.crossOriginStrippedHeaders { current.headers[name] = nil }
                }
                if let sentAt {
                    let timing = Timing(
                        startTick: sentAt,
                        firstByteTick: answer.firstByte,
                        endTick: .now,
                        use: answer.connection
                    )
                    var hop = RedirectHop(
                        request: sending,
                        status: answer.status,
                        headers: answer.headers,
                        location: url,
                        timing: timing
                    )
                    (hop.next, hop.attempt) = (current, machine.attempt)
                    call.followed(hop)
                }
            }
        }
    }
}

/// A response's status and headers, whatever carries its body, and what the session notes on it as it arrives.
protocol ResponseHead {
    var status: HTTPResponse.Status { get }
    var headers: HTTPFields { get }
    /// The value of one field, as `headers[name]` reads it; a body read whole reads it without converting its
    /// head (see ``ResponseFields``).
    func value(of name: HTTPField.Name) -> String?
    /// The request this answered as finally sent (after redirects); set as the exchange ends.
    var sent: PreparedRequest? { get set }
    /// When the head arrived; set as the exchange ends.
    var firstByte: Tick? { get set }
    /// The connection that carried it, when the transport says; the exchange adds the connections its redirects
    /// opened.
    var connection: ConnectionUse? { get set }
}

extension TransportResponse: ResponseHead {
    func value(of name: HTTPField.Name) -> String? { headers[name] }
}

extension ResponseBody: ResponseHead {
    func value(of name: HTTPField.Name) -> String? { fields.value(name) }
}

/// How an attempt makes its call: with a slot of its own, or sharing the call of an identical request in flight.
extension RequestExecutor {
    /// The key identical requests share a call by: `nil` when `request` makes a call of its own (coalescing is
    /// off, its cookies or its authentication differ from the session's, or its method or body cannot be shared).
    func sharingKey(_ request: ErasedRequest, _ prepared: PreparedRequest) -> CoalescingKey? {
        let scheduling = configuration.scheduling
        guard request.coalesces, scheduling.coalescesRequests,
            request.cookieHandling(under: snapshot) == configuration.cookieHandling,
            request.usesSessionAuthentication
        else {
            return nil
        }
        return CoalescingKey(prepared, varyingHeaders: scheduling.coalescingHeaders)
    }

    /// Runs one attempt's `exchange`: as the call machine's `role` says (only the first attempt has one, the
    /// pool's decision as the request registered), or else once the pool gives the request a slot, or by sharing
    /// the call of an identical request in flight (same `key`). The shared call runs with the settings (timeouts,
    /// limits) of the request that started it.
    @inline(__always)
    nonisolated(nonsending) func fetch(
        _ call: Call,
        id: RequestID,
        role: FirstCall?,
        sharing key: CoalescingKey?,
        _ exchange: nonisolated(nonsending) () async throws -> ResponseBody
    ) async throws -> ResponseBody {
        let (url, priority) = (call.prepared.url, call.request.priority)
        guard let gauges = metrics?.poolGauges(for: url) else {
            nonisolated(nonsending) func send() async throws -> ResponseBody {
                try await pool.withSlot(id, url: url, priority: priority, call: call, exchange)
            }
            switch role {
            case .own?: return try await exchange()
            case .leads?: return try await exchange()  // the pool hands its outcome on as the attempt ends
            case .follows?:
                guard let key else { return try await send() }  // the pool gives the role by the key
                return try await pool.follow(key, by: id, call: call, orLead: send)
            case nil:
                guard let key else { return try await send() }
                return try await pool.shared(key, by: id, call: call, send)
            }
        }
        // The same with metrics: the server's in-flight and queued gauges, and a count of calls answered by an
        // identical call in flight (those whose own call never ran).
        var ran = false
        nonisolated(nonsending) func counted() async throws -> ResponseBody {
            ran = true
            gauges.active.increment()
            defer { gauges.active.decrement() }
            return try await exchange()
        }
        nonisolated(nonsending) func send() async throws -> ResponseBody {
            try await pool.withSlot(id, url: url, priority: priority, call: call, queuedGauge: gauges.queued, counted)
        }
        let result: ResponseBody
        switch role {
        case .own?: return try await counted()
        case .leads?: return try await counted()
        case .follows?:
            guard let key else { return try await send() }
            result = try await pool.follow(key, by: id, call: call, orLead: send)
        case nil:
            guard let key else { return try await send() }
            result = try await pool.shared(key, by: id, call: call, send)
        }
        if !ran { metrics?.coalesced() }
        return result
    }
}

extension RequestExecutor {
    /// Adds the jar's cookies for the request's URL after any `Cookie` header it has of its own, when `handling`
    /// sends them.
    nonisolated(nonsending) func addCookies(to request: inout PreparedRequest, handling: CookieHandling) async {
        guard let jar = configuration.cookieJar, handling.contains(.send),
            let cookies = await jar.headerValue(for: request.url)
        else { return }
        request.headers.append(HTTPField(name: .cookie, value: cookies))
        request.headers.joinCookieFields()  // after the request's own, in one field
    }

    /// Stores the response's `Set-Cookie` headers when `handling` stores them. A jar that cannot save keeps them in memory; the failure is
    /// logged rather than failing a request that succeeded.
    nonisolated(nonsending) func storeCookies(
        from responseHeaders: HTTPFields,
        for url: URL,
        handling: CookieHandling
    ) async {
        guard let jar = configuration.cookieJar, handling.contains(.store) else { return }
        let headers = responseHeaders[values: .setCookie]
        guard !headers.isEmpty else { return }
        do {
            try await jar.store(setCookieHeaders: headers, from: url)
        } catch {
            // Every request that sets a cookie would log it: once, then at a bounded rate.
            snapshot.cookieJarWarning.warn(
                configuration.logger,
                "\(error)",
                metadata: ["courier.component": "cookie-jar"]
            )
        }
    }
}

extension RequestExecutor {
    /// Runs `send`; when ``Configuration/waitsForConnectivity`` is set and the connection could not be made
    /// (nothing was sent), probes the host, or the proxy, until it answers or the wait is over, then runs it again.
    /// The wait runs in a task the call can stop: only requests that meet an unreachable host pay for it.
    nonisolated(nonsending) func waitingForConnectivity<Answer>(
        _ request: PreparedRequest,
        call: Call,
        _ send: nonisolated(nonsending) () async throws -> Answer
    ) async throws -> Answer {
        do {
            return try await send()
        } catch let error as CourierError where [.connectionFailed, .offline].contains(error.code) {
            guard let wait = configuration.waitsForConnectivity, request.body.isReplayable else { throw error }
            let budget = min(wait, Tick.now.duration(to: request.deadlineTick))
            let monitor =
                request.proxy.map {
                    ReachabilityMonitor(
                        host: $0.host,
                        port: $0.port,
                        interval: .milliseconds(250),
                        probeTimeout: .seconds(1)
                    )
                }
                ?? ReachabilityMonitor(url: request.url, interval: .milliseconds(250), probeTimeout: .seconds(1))
            configuration.logger.info("waiting up to \(budget) for \(monitor.host):\(monitor.port) to be reachable")
            let probing = Task {
                budget > .zero ? await monitor.waitUntilReachable(timeout: budget).isReachable : false
            }
            let stop = TaskCancellable(probing)
            call.install(stop)
            defer { call.remove(stop) }
            let reachable = await withTaskCancellationHandler {
                await probing.value
            } onCancel: {
                probing.cancel()
            }
            guard reachable else {
                if probing.isCancelled || call.isCancelled { throw CourierError.cancelled() }
                throw CourierError(
                    code: .offline,
                    message: "\(monitor.host):\(monitor.port) is still unreachable after waiting \(budget)",
                    underlying: error
                )
            }
            return try await send()
        }
    }
}

/// How a session reads bodies whole through its transport: the transport's own way when it has one
/// (``CollectingTransport``), else through ``Transport/send(_:cancellation:)`` in the calling task. Chosen once,
/// when the session is made, so a request casts nothing.
enum WholeBodyFetch: Sendable {
    case collecting(any CollectingTransport)
    case streaming(any Transport)

    init(_ transport: any Transport) {
        if let collecting = transport as? any CollectingTransport {
            self = .collecting(collecting)
        } else {
            self = .streaming(transport)
        }
    }

    /// Sends `request` and reads its body whole within `reading`; `call` stops it. Inlined into its one
    /// caller, so the switch costs no async frame of its own.
    @inline(__always)
    nonisolated(nonsending) func fetch(
        _ request: PreparedRequest,
        reading: BodyReading,
        call: Call
    ) async throws -> ResponseBody {
        switch self {
        case .collecting(let transport): try await transport.fetch(request, reading: reading, call: call)
        case .streaming(let transport): try await transport.fetchWhole(request, reading: reading, call: call)
        }
    }
}
