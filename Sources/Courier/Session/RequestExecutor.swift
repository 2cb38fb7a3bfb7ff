import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging
import NIOCore
import Tracing

/// Runs one request from start to end: prepare, send (following redirects), read the body within limits,
/// validate, decode, and retry when the policy says so. A value type holding a configuration snapshot, so
/// requests run in parallel without going through the session actor.
///
/// Its steps, and the pool's and the trace's that they call, are `nonisolated(nonsending)`: they run on their
/// caller's executor, which is always the global one (every caller is nonisolated), instead of switching to it
/// anew at each call. That took a request from 40 executor switches to 26.
struct RequestExecutor: Sendable {
    let snapshot: SessionSnapshot
    let transport: any Transport
    /// How a body read whole is fetched through the transport.
    let wholeBodyFetch: WholeBodyFetch
    let pool: RequestPool
    /// Where stale-while-revalidate refreshes run: one per key, ended with the session.
    let refreshes: BackgroundWork<CacheKey>

    /// For reading single settings; calls that take the whole configuration pass `snapshot.configuration`, as
    /// in ``RequestPreparation``.
    var configuration: Configuration { snapshot.configuration }
    var tracer: (any Tracer)? { snapshot.tracer }
    var metrics: CourierMetrics { snapshot.metrics }

    /// Runs `request` on the plain path when nothing it needs is off that path, else on the general one. Inlined,
    /// so a plain request goes from ``Session/send(_:)`` straight into ``runPlain(_:)``, in one async frame fewer.
    @inline(__always)
    nonisolated(nonsending) func run(_ request: ErasedRequest) async throws -> ErasedResponse {
        if snapshot.isPlain && request.accessories.isEmpty && request.retryPolicy == nil { return try await runPlain(request) }
        return try await runGeneral(request)
    }

    /// ``run(_:)`` for a request that uses an optional step: tracing, accessories, the cache, retries.
    private nonisolated(nonsending) func runGeneral(_ request: ErasedRequest) async throws -> ErasedResponse {
        let start = Tick.now
        let startDate = Date()
        let trace = RequestTrace(tracer: tracer, method: request.method)
        var sentBytes: Int64?
        let accessories = request.accessories
        var started: PreparedRequest?  // for the accessories, once the request is prepared
        do {
            let response = try await trace.run {
                let prepared = try await RequestPreparation(snapshot: snapshot).prepare(request)
                sentBytes = prepared.body.length
                trace.started(prepared)
                if !accessories.isEmpty {
                    started = prepared
                    for accessory in accessories { accessory.requestWillStart(prepared) }
                }
                if let step = CacheStep(snapshot: snapshot, policy: request.cachePolicy ?? configuration.cachePolicy, request: prepared) {
                    return try await runCached(request, prepared: prepared, step: step, startDate: startDate, start: start)
                }
                return try await network(request, prepared: prepared, cacheStep: nil, startDate: startDate, start: start)
            }
            let outcome = started.map { _ in
                Result<ResponseBody, CourierError>.success(ResponseBody(status: response.status, fields: response.record.fields, data: response.body))
            }
            Self.tell(accessories, started, outcome) { $0.requestWillStop($1, outcome: $2) }
            trace.finished(status: response.status, error: nil)
            recordSuccess(response, method: request.method, start: start, sentBytes: sentBytes)
            Self.tell(accessories, started, outcome) { $0.requestDidStop($1, outcome: $2) }
            return response
        } catch {
            let failure = userFacing(error)
            let outcome = Result<ResponseBody, CourierError>.failure(failure)
            Self.tell(accessories, started, outcome) { $0.requestWillStop($1, outcome: $2) }
            trace.finished(status: failure.status, error: failure)
            recordFailure(failure, method: request.method, start: start, sentBytes: sentBytes)
            Self.tell(accessories, started, outcome) { $0.requestDidStop($1, outcome: $2) }
            throw failure
        }
    }

    /// `error` as the caller gets it: a ``CourierError`` with the configured message for users.
    func userFacing(_ error: any Error) -> CourierError {
        var failure = Self.normalize(error)
        failure.userMessage = failure.userMessage ?? configuration.userMessages.message(for: failure)
        return failure
    }

    func recordSuccess(_ response: ErasedResponse, method: HTTPRequest.Method, start: Tick, sentBytes: Int64?) {
        metrics.request(method: method, status: response.status, duration: start.duration(to: .now), sentBytes: sentBytes, receivedBytes: response.body.count)
    }

    func recordFailure(_ failure: CourierError, method: HTTPRequest.Method, start: Tick, sentBytes: Int64?) {
        metrics.request(method: method, status: failure.status, duration: start.duration(to: .now), sentBytes: sentBytes, receivedBytes: nil)
    }

    /// The body limits of `request`: the session's, or its own body size limit.
    func limits(for request: ErasedRequest) -> ResponseLimits {
        request.maxResponseBytes.map { ResponseLimits(copying: configuration.limits, maxBodyBytes: $0) } ?? configuration.limits
    }

    /// Calls `hook` on each accessory of a request that started (`request` is `nil` when it never did).
    private static func tell(_ accessories: [any RequestAccessory], _ request: PreparedRequest?,
                             _ outcome: Result<ResponseBody, CourierError>?,
                             _ hook: (any RequestAccessory, PreparedRequest, Result<ResponseBody, CourierError>) -> Void) {
        guard let request, let outcome else { return }
        for accessory in accessories { hook(accessory, request, outcome) }
    }

    /// Sends `prepared` through the pool, which tracks it until it ends. After an unsafe method succeeds, the
    /// cached GET of its URL is dropped, whichever cache policy the request itself ran under.
    nonisolated(nonsending) func network(_ request: ErasedRequest, prepared: PreparedRequest, cacheStep: CacheStep?, startDate: Date,
                                         start: Tick) async throws -> ErasedResponse {
        let timeouts = configuration.timeouts.applying(request.timeouts)
        let deadline = start + timeouts.total
        let key = sharingKey(request, prepared)
        // The pool cancels the request through its canceller at its deadline, which bounds the body the exchange reads.
        let response = try await pool.track(PoolTicket(prepared, from: request), deadline: deadline, sharing: key,
                                            failure: { timedOut($0, prepared, deadline: deadline, timeouts: timeouts) }) { id, canceller, first in
            try await attempts(request, prepared: prepared, id: id, canceller: canceller, first: first, sharing: key, cacheStep: cacheStep,
                               timeouts: timeouts, deadline: deadline, startDate: startDate, start: start)
        }
        await invalidateAfterUnsafe(prepared, status: response.status, headers: response.headers)
        return response
    }

    /// Sends the request until it succeeds, fails for good, or runs out of retries. With a cache step, a 304
    /// becomes the revalidated entry and the final answer is offered to the cache.
    ///
    /// The first attempt makes the call the pool decided on as the request registered (`first`: with the slot it
    /// gave, or following an identical request's call); before a later one it gives that slot back, and each
    /// later attempt asks for a slot, or an identical call to share by `key`, anew.
    nonisolated(nonsending) func attempts(_ request: ErasedRequest, prepared: PreparedRequest, id: RequestID, canceller: Canceller,
                                          first: FirstCall?, sharing key: CoalescingKey?, cacheStep: CacheStep?,
                                          timeouts: Timeouts, deadline: Tick, startDate: Date,
                                          start: Tick, retriedStaleConnection: Bool = false) async throws -> ErasedResponse {
        let limits = limits(for: request)
        let policy = request.retryPolicy ?? configuration.retryPolicy
        if let budget = policy?.budget { budget.deposit(host: prepared.url.host() ?? "") }
        let log = snapshot.debugLog
        let cookies = request.cookieHandling(under: snapshot)

        var attempt = 1
        var retriedStaleConnection = retriedStaleConnection
        var first = first
        /// Called before another attempt: the first attempt's slot is not held through a retry's wait.
        func giveBackFirstSlot() {
            if first?.takesSlot == true { pool.releaseSlot(id) }
            first = nil
        }
        while true {
            let failure: CourierError
            do {
                let requestTime = Date()
                var exchanged = try await fetch(request, prepared: prepared, id: id, first: first, sharing: key, canceller: canceller) {
                    try await exchange(prepared, timeouts: timeouts, deadline: deadline, limits: limits, cookies: cookies, canceller: canceller,
                                       log: log, start: start)
                }
                var cacheInfo = CacheInfo.network
                if let cacheStep { (exchanged, cacheInfo) = await cacheStep.merge(exchanged, requestTime: requestTime) }
                let (sent, body) = (exchanged.sent, exchanged.body)
                for monitor in configuration.monitors { monitor.didReceive(body, for: sent) }
                // A retryable status is retried whether or not a validator would reject it, so a caller that
                // validates the status itself (the CLI does) still gets its retries.
                if let policy, policy.retryableStatuses.contains(body.status.code) {
                    var statusError = CourierError.httpStatus(body.status, bodyPreview: nil)
                    statusError.retryAfterValue = body.value(of: .retryAfter)
                    if let delay = retryDelay(policy, attempt: attempt, request: prepared, error: statusError, deadline: deadline) {
                        giveBackFirstSlot()
                        try await pause(prepared, attempt: attempt, delay: delay, error: statusError, canceller: canceller, log: log)
                        attempt += 1
                        continue
                    }
                }
                // RFC 9111 stores what the server says may be stored, an error status with explicit freshness too, so
                // the `http` policy stores before validation; the time-to-live policies keep only answers that pass it.
                let storesFirst = cacheStep?.decision.policy == .http
                if let cacheStep, storesFirst, !cacheInfo.wasRevalidated {
                    cacheInfo.wasStored = await cacheStep.store(body, requestTime: requestTime)
                }
                try validate(body, for: sent, extra: request.validators, usesSession: request.usesSessionValidators)
                let value = try request.decode(body)
                if let cacheStep, !storesFirst, !cacheInfo.wasRevalidated {
                    cacheInfo.wasStored = await cacheStep.store(body, requestTime: requestTime)
                }
                return makeResponse(value, exchanged, cacheInfo: cacheInfo, original: prepared, attempts: attempt, startDate: startDate, start: start)
            } catch {
                failure = timedOut(error, prepared, deadline: deadline, timeouts: timeouts)
            }
            giveBackFirstSlot()
            if !retriedStaleConnection, Self.metStaleConnection(failure, prepared) {
                // A kept-alive connection the server had already closed: the request never reached it. Every
                // browser and OkHttp sends it again at once on a fresh connection; it is not a retry of the policy's.
                retriedStaleConnection = true
                log.retry(prepared, attempt: attempt, delay: .zero, error: failure)
                continue
            }
            if failure.code == .cancelled {
                for monitor in configuration.monitors { monitor.willCancel(prepared) }
            } else if failure.code != .httpStatus,  // statuses were decided above, before validation
                      let policy, let delay = retryDelay(policy, attempt: attempt, request: prepared, error: failure, deadline: deadline) {
                do {
                    try await pause(prepared, attempt: attempt, delay: delay, error: failure, canceller: canceller, log: log)
                    attempt += 1
                    continue
                } catch {
                    for monitor in configuration.monitors { monitor.willCancel(prepared) }
                    complete(prepared, .cancelled(), attempts: attempt, startDate: startDate, start: start, log: log)
                    throw CourierError.cancelled()
                }
            }
            complete(prepared, failure, attempts: attempt, startDate: startDate, start: start, log: log)
            throw failure
        }
    }

    /// The response carrying `value`, decoded from `exchanged`'s body: timed, and told to the monitors.
    func makeResponse(_ value: DecodedValue, _ exchanged: ExchangeResult, cacheInfo: CacheInfo, original: PreparedRequest, attempts: Int,
                          startDate: Date, start: Tick) -> ErasedResponse {
        let (sent, body) = (exchanged.sent, exchanged.body)
        let timing = Timing(startDate: startDate, startTick: start, firstByteTick: exchanged.firstByte, endTick: .now)
        tellMonitors(original, sent: sent, result: .success(body), timing: timing, attempts: attempts)
        return Response(value: value, record: ResponseRecord(request: sent, status: body.status, fields: body.fields, body: body.data,
                                                             cacheInfo: cacheInfo, timing: timing))
    }

    /// `error` as a ``CourierError``; a cancellation once `deadline` has passed is the pool's doing at that
    /// deadline, so it becomes the total timeout of `request`.
    func timedOut(_ error: any Error, _ request: PreparedRequest, deadline: Tick, timeouts: Timeouts) -> CourierError {
        let failure = Self.normalize(error)
        guard failure.code == .cancelled, Tick.now >= deadline else { return failure }
        return .timeout(.total, after: timeouts.total, url: configuration.redactor.redact(url: request.url))
    }

    /// Whether `failure` is a pooled connection the server closed before answering (the write found it closed,
    /// it closed before any response byte, or the server's kernel answered the request with a reset because the
    /// socket was already closed), for a request that can safely go again: idempotent, with a body that can be
    /// sent twice.
    static func metStaleConnection(_ failure: CourierError, _ request: PreparedRequest) -> Bool {
        guard request.isIdempotent else { return false }
        if case .stream = request.body { return false }
        if failure.code == .connectionReset { return failure.underlying is IOError }
        guard failure.code == .connectionClosed else { return false }
        if let channelError = failure.underlying as? ChannelError { return channelError == .ioOnClosedChannel }
        if let clientError = failure.underlying as? HTTPClientError { return clientError == .remoteConnectionClosed }
        return false
    }

    /// The wait before another attempt, when the policy allows one that can still finish before the deadline.
    private func retryDelay(_ policy: RetryPolicy, attempt: Int, request: PreparedRequest, error: CourierError,
                            deadline: Tick) -> Duration? {
        guard case .retry(let delay) = policy.decide(attempt: attempt, request: request, error: error),
              Tick.now + delay < deadline else { return nil }
        return delay
    }

    /// Tells the monitors and the log, then waits; throws ``CourierError/Code/cancelled`` if the request is
    /// cancelled meanwhile.
    private nonisolated(nonsending) func pause(_ request: PreparedRequest, attempt: Int, delay: Duration, error: CourierError,
                                               canceller: Canceller, log: DebugLog) async throws {
        for monitor in configuration.monitors { monitor.willRetry(request, attempt: attempt, delay: delay, error: error) }
        metrics.retry(method: request.method)
        log.retry(request, attempt: attempt, delay: delay, error: error)
        try await CancellableSleep.sleep(for: delay, canceller: canceller)
    }

    func complete(_ request: PreparedRequest, _ failure: CourierError, attempts: Int, startDate: Date, start: Tick,
                          log: DebugLog) {
        let timing = Timing(startDate: startDate, startTick: start, firstByteTick: nil, endTick: .now)
        log.failure(request, failure, duration: timing.total)
        tellMonitors(request, sent: request, result: .failure(failure), timing: timing, attempts: attempts)
    }

    /// Tells every monitor the request ended: ``EventMonitor/didComplete(_:result:timing:)``, then the
    /// ``DebugMessage`` in ``EventMonitor/didFinish(with:)``.
    private func tellMonitors(_ original: PreparedRequest, sent: PreparedRequest, result: Result<ResponseBody, CourierError>,
                              timing: Timing, attempts: Int) {
        guard !configuration.monitors.isEmpty else { return }
        var message = DebugMessage(originalRequest: original, currentRequest: sent, response: nil, error: nil, timing: timing, attempts: attempts)
        switch result {
        case .success(let body): message.response = body
        case .failure(let error): message.error = error
        }
        for monitor in configuration.monitors {
            monitor.didComplete(sent, result: result, timing: timing)
            monitor.didFinish(with: message)
        }
    }

    func validate(_ body: ResponseBody, for request: PreparedRequest, extra: [any ResponseValidator], usesSession: Bool) throws {
        for validator in usesSession ? configuration.validators : [] {
            try Self.apply(validator, to: body, for: request)
        }
        for validator in extra {
            try Self.apply(validator, to: body, for: request)
        }
    }

    /// Throws when `validator` rejects or ignores `body`.
    private static func apply(_ validator: any ResponseValidator, to body: ResponseBody, for request: PreparedRequest) throws {
        switch validator.validate(body, for: request) {
        case .accept: return
        case .ignore: throw CourierError(code: .ignored, message: "a validator ignored the response")
        case .reject(let error):
            var failure = (error as? CourierError)
                ?? CourierError(code: .validation, message: "the response was rejected: \(error)", underlying: error)
            failure.retryAfterValue = body.value(of: .retryAfter)
            if failure.status == nil { failure.status = body.status }
            throw failure
        }
    }

    /// Every error leaving Courier is a ``CourierError``.
    static func normalize(_ error: any Error) -> CourierError { .normalized(error) }
}

extension ResponseLimits {
    /// `limits` with another body size limit.
    init(copying limits: ResponseLimits, maxBodyBytes: Int) {
        self = limits
        self.maxBodyBytes = maxBodyBytes
    }
}
