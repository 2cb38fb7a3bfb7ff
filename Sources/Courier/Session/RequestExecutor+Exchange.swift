import Foundation
import HTTPTypes

/// One exchange on the wire: the request sent, redirects followed, the answer read.
extension RequestExecutor {
    /// Sends `request`, following redirects, and reads each answer's body whole where it arrives; the pool bounds
    /// the exchange by the deadline, through `canceller`. A cancellation at the deadline is thrown as the total
    /// timeout here, inside the call, so requests sharing it hear the timeout too.
    nonisolated(nonsending) func exchange(_ request: PreparedRequest, timeouts: Timeouts, deadline: Tick,
                                          limits: ResponseLimits, cookies: CookieHandling, canceller: Canceller, log: DebugLog,
                                          start: Tick) async throws -> ExchangeResult {
        let reading = BodyReading(limits: limits, decompresses: configuration.decompressesResponses)
        do {
            let (sent, body, firstByte) = try await following(request, timeouts: timeouts, deadline: deadline, cookies: cookies, log: log,
                                                              canceller: canceller) { outgoing in
                try await wholeBodyFetch.fetch(outgoing, reading: reading, canceller: canceller)
            } discard: { _ in }
            log.response(body, for: sent, since: start)
            return ExchangeResult(sent: sent, body: body, firstByte: firstByte)
        } catch {
            throw timedOut(error, request, deadline: deadline, timeouts: timeouts)
        }
    }

    /// Sends `request`, following redirects, and returns the final response with its body still arriving; the
    /// transport bounds the exchange by `deadline`.
    nonisolated(nonsending) func open(_ request: PreparedRequest, timeouts: Timeouts, deadline: Tick,
                                      cookies: CookieHandling, log: DebugLog)
        async throws -> (sent: PreparedRequest, response: TransportResponse, firstByte: Tick) {
        let (sent, response, firstByte) = try await following(request, timeouts: timeouts, deadline: deadline, cookies: cookies, log: log,
                                                              canceller: nil) { outgoing in
            try await transport.send(outgoing)
        } discard: { response in
            for try await _ in response.body {}  // let the connection be reused
        }
        return (sent, response, firstByte)
    }

    /// Sends `request` with `send`, following redirects (`discard` lets a redirect's answer go), and returns the
    /// request as finally sent with its answer and when its head arrived. Inlined into its two callers, so the
    /// answer reaches them without a frame of its own and `send` runs in theirs.
    @inline(__always)
    private nonisolated(nonsending) func following<Answer: ResponseHead>(
        _ request: PreparedRequest, timeouts: Timeouts, deadline: Tick, cookies: CookieHandling, log: DebugLog,
        canceller: Canceller?,
        send: nonisolated(nonsending) (TransportRequest) async throws -> Answer,
        discard: nonisolated(nonsending) (Answer) async throws -> Void
    ) async throws -> (sent: PreparedRequest, answer: Answer, firstByte: Tick) {
        var current = request
        var redirects = RedirectState(policy: configuration.redirects, initial: request.method, url: request.url)
        while true {
            try HeaderValidation.check(current.headers)
            // Each step a request does without (cookies, tracing, waiting for connectivity) is skipped here, not
            // entered: every async call copies the request into a frame of its own.
            var sending = current
            if configuration.cookieJar != nil { await addCookies(to: &sending, handling: cookies) }
            if let tracer { sending.addTraceContext(tracer: tracer) }
            for monitor in configuration.monitors { monitor.willSend(sending) }
            log.request(sending)
            let outgoing = TransportRequest(method: sending.method, url: sending.url, facts: sending.knownFacts, headers: sending.headers,
                                            body: sending.body,
                                            timeouts: timeouts, deadline: deadline, tls: configuration.tls.policy(for: sending.url),
                                            proxy: configuration.proxies.proxy(for: sending.url), httpVersion: configuration.httpVersion)
            let answer = if configuration.waitsForConnectivity == nil {
                try await send(outgoing)
            } else {
                try await waitingForConnectivity(outgoing, canceller: canceller) { try await send(outgoing) }
            }
            let firstByte = Tick.now
            for monitor in configuration.monitors { monitor.didSend(sending) }
            if configuration.cookieJar != nil { await storeCookies(from: answer.headers, for: sending.url, handling: cookies) }
            let action = try redirects.next(method: current.method, url: current.url, status: answer.status,
                                            location: answer.value(of: .location), bodyIsReplayable: current.body.isReplayable)
            switch action {
            case .deliver:
                return (current, answer, firstByte)
            case .follow(let method, let url, let dropsBody, let stripsCredentials):
                log.redirect(from: current, status: answer.status, to: url)
                try await discard(answer)
                current.method = method
                current.url = url
                if dropsBody {
                    current.body = .empty
                    current.headers[.contentType] = nil
                    current.headers[.contentLength] = nil
                }
                if stripsCredentials {
                    for name in configuration.redirects.crossOriginStrippedHeaders { current.headers[name] = nil }
                }
            }
        }
    }
}

/// A response's status and headers, whatever carries its body.
protocol ResponseHead {
    var status: HTTPResponse.Status { get }
    var headers: HTTPFields { get }
    /// The value of one field, as `headers[name]` reads it; a body read whole reads it without converting its
    /// head (see ``ResponseFields``).
    func value(of name: HTTPField.Name) -> String?
}

extension TransportResponse: ResponseHead {
    func value(of name: HTTPField.Name) -> String? { headers[name] }
}

extension ResponseBody: ResponseHead {
    func value(of name: HTTPField.Name) -> String? { fields.value(name) }
}

/// What one attempt brought back: the request as finally sent (after redirects), the body, and when its head
/// arrived. Shared by every caller of a coalesced call.
struct ExchangeResult: Sendable {
    let sent: PreparedRequest
    let body: ResponseBody
    let firstByte: Tick
}

/// A call's final answer as the pool hands it back: the exchange that brought it, when its attempt started (the
/// cache's request time), and how many attempts it took.
struct CallResult: Sendable {
    let exchanged: ExchangeResult
    let requestTime: Date
    let attempts: Int
}
