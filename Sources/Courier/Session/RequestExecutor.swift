import AsyncHTTPClient
import HTTPTypes
import Logging
import NIOCore
import Tracing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Runs one request from start to end: prepare, send (following redirects), read the body within limits,
/// validate, decode, and retry when the policy says so. A value type holding a configuration snapshot, so
/// requests run in parallel without going through the session actor.
///
/// Its steps, and the pool's and the trace's that they call, are `nonisolated(nonsending)`: they run on their
/// caller's executor, which is always the global one (every caller is nonisolated), instead of switching to it
/// anew at each call. That took a request from 40 executor switches to 26.
struct RequestExecutor: Sendable {
    let snapshot: SessionSnapshot
    /// The session's state, which keeps the URLs of paths resolved under `snapshot`.
    let state: SessionState
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
    var metrics: CourierMetrics? { snapshot.metrics }

    /// Runs `request` from start to end: prepares it, answers it from the cache or sends it through the pool
    /// (``network(_:prepared:cacheStep:start:)``), and reports the outcome to the trace, the accessories and the
    /// metrics (``observed(_:known:_:)``). A step the configuration does not turn on is skipped, not entered.
    /// `known` is what the request's path resolved to before, when the session's state held it.
    nonisolated(nonsending) func run(_ request: ErasedRequest, known: ResolvedURL? = nil) async throws -> ErasedResponse
    {
        try await observed(request, known: known) { prepared, start in
            try await answer(request, prepared: prepared, start: start)
        }
    }

    /// Prepares `request` and runs `body` with it, in the request's trace span, and reports how it ended to the
    /// span, the accessories and the metrics: the road every call that answers with one response takes (a send, a
    /// batch member, a chain step, an upload, cache-then-network). `body` returns the final response.
    nonisolated(nonsending) func observed(
        _ request: ErasedRequest,
        known: ResolvedURL? = nil,
        _ body: nonisolated(nonsending) (PreparedRequest, Tick) async throws -> ErasedResponse
    ) async throws -> ErasedResponse {
        let start = Tick.now
        let trace = tracer.map { RequestTrace(tracer: $0, method: request.method) }
        var started: PreparedRequest?  // once the request is prepared
        nonisolated(nonsending) func prepared() async throws -> ErasedResponse {
            let prepared = try await begin(request, known: known, start: start, trace: trace)
            started = prepared
            return try await body(prepared, start)
        }
        do {
            let response = try await trace.run { try await prepared() }
            if let started {
                let outcome = Result<ResponseBody, CourierError>.success(
                    ResponseBody(status: response.status, fields: response.storage.fields, data: response.body)
                )
                report(
                    CallEnd(
                        request: request,
                        prepared: started,
                        start: start,
                        outcome: outcome,
                        status: response.status,
                        connection: response.storage.timing.use,
                        sentBytes: started.body.length,
                        receivedBytes: response.body.count
                    ),
                    trace: trace
                )
            }
            return response
        } catch {
            let failure = userFacing(error)
            if let started {
                report(
                    CallEnd(
                        request: request,
                        prepared: started,
                        start: start,
                        outcome: .failure(failure),
                        status: failure.status,
                        sentBytes: started.body.length
                    ),
                    trace: trace
                )
            } else {
                reportUnprepared(failure, method: request.method, start: start, trace: trace)
            }
            throw failure
        }
    }

    /// Prepares `request` and tells its span and its accessories it starts: how every kind of call begins. `known`
    /// is what the request's path resolved to before, if the session's state held it; the call's deadline counts
    /// from `start`.
    nonisolated(nonsending) func begin(
        _ request: ErasedRequest,
        known: ResolvedURL?,
        start: Tick,
        trace: RequestTrace?
    ) async throws -> PreparedRequest {
        let preparation = RequestPreparation(snapshot: snapshot, start: start, state: state, known: known)
        let prepared = try await preparation.prepare(request)
        trace?.started(prepared)
        for accessory in request.accessories { accessory.requestWillStart(prepared) }
        return prepared
    }

    /// Answers the prepared `request`: from an interceptor or the cache when they can, else from the network.
    @inline(__always)
    private nonisolated(nonsending) func answer(
        _ request: ErasedRequest,
        prepared: PreparedRequest,
        start: Tick
    ) async throws -> ErasedResponse {
        if request.hasInterceptors(under: configuration), let answer = try await answerWithoutNetwork(request, prepared)
        {
            return try await respond(request, prepared: prepared, body: answer, info: .network, start: start)
        }
        if configuration.cache != nil,
            let step = CacheStep(
                snapshot: snapshot,
                policy: request.cachePolicy ?? configuration.cachePolicy,
                request: prepared
            )
        {
            return try await runCached(request, prepared: prepared, step: step, start: start)
        }
        return try await network(request, prepared: prepared, cacheStep: nil, start: start)
    }

    /// The body limits of `request`: the session's, or its own body size limit.
    func limits(for request: ErasedRequest) -> ResponseLimits {
        request.maxResponseBytes.map { ResponseLimits(copying: configuration.limits, maxBodyBytes: $0) }
            ?? configuration.limits
    }

    /// The call that sends `prepared`, made from `request` under the session's configuration, started at `start`.
    func makeCall(_ request: ErasedRequest, prepared: PreparedRequest, start: Tick) -> Call {
        Call(
            request,
            prepared: prepared,
            start: start,
            limits: limits(for: request),
            cookies: request.cookieHandling(under: snapshot),
            log: snapshot.debugLog?.forCall(),
            monitors: request.monitors.isEmpty ? configuration.monitors : configuration.monitors + request.monitors
        )
    }

    /// Sends `prepared` through the pool, which tracks it from its first attempt to its final answer; then, out
    /// of the pool (its slot free for the next request), merges a 304 into the revalidated entry, stores,
    /// validates and decodes the answer. After an unsafe method succeeds, the cached GET of its URL is dropped,
    /// whichever cache policy the request itself ran under.
    nonisolated(nonsending) func network(
        _ request: ErasedRequest,
        prepared: PreparedRequest,
        cacheStep: CacheStep?,
        start: Tick
    ) async throws -> ErasedResponse {
        let call = makeCall(request, prepared: prepared, start: start)
        let key = sharingKey(request, prepared)
        // When the answering attempt started (RFC 9111's request time) and how many attempts it took: the
        // operation's own, outside the pool, which hands back only the answer.
        var requestTick = start
        var attempts = 0
        // The pool cancels the call at its deadline, which bounds the body the exchange reads.
        var exchanged = try await pool.track(
            call,
            sharing: key,
            queuedGauge: metrics?.poolGauges(for: prepared.url).queued,
            failure: { timedOut($0, call) }
        ) { id, first in
            // The first attempt's outcome when it leads a call identical requests share: the pool hands it to them
            // as the attempt ends (`next`, or the end of the call), in a lock round trip it takes anyway.
            var led: Result<ResponseBody, any Error>?
            let (exchanged, attemptsMade) = try await drive(call, as: first) { sending, machine in
                requestTick = .now
                let role = machine.role
                let leads = if case .leads? = role { true } else { false }
                let exchanged: ResponseBody
                do {
                    exchanged = try await fetch(call, id: id, role: role, sharing: key) {
                        try await exchange(call, sending, &machine)
                    }
                } catch {
                    if leads { led = .failure(error) }
                    throw error
                }
                if leads { led = .success(exchanged) }
                for monitor in call.monitors { monitor.didReceive(exchanged, for: exchanged.sent ?? sending) }
                return exchanged
            } next: { _, leaving in
                // The first attempt's slot is not held through a wait, a refresh or the next attempt.
                switch (leaving, led) {
                case (.handOver, let outcome?): pool.releaseSlot(id, handingOver: outcome, call: call)
                case (.handOver, nil), (.releaseSlot, _): pool.releaseSlot(id)
                case (.nothing, _): break
                }
                led = nil
            }
            attempts = attemptsMade
            return exchanged
        }
        do {
            let requestTime = cacheStep.map { _ in requestTick.date }  // a wall-clock time only for the cache
            var cacheInfo = CacheInfo.network
            if let cacheStep, let requestTime {
                (exchanged, cacheInfo) = await cacheStep.merge(exchanged, requestTime: requestTime)
            }
            if configuration.cache != nil {
                await invalidateAfterUnsafe(prepared, status: exchanged.status, headers: exchanged.headers)
            }
            // RFC 9111 stores what the server says may be stored, an error status with explicit freshness too, so
            // the `http` policy stores before validation; the time-to-live policies keep only answers that pass it.
            let storesFirst = cacheStep?.decision.policy == .http
            if let cacheStep, let requestTime, storesFirst, !cacheInfo.wasRevalidated {
                cacheInfo.wasStored = await cacheStep.store(exchanged, requestTime: requestTime)
            }
            let received = exchanged  // what the cache keeps: the answer as the server sent it
            let sent = received.sent ?? prepared  // set on every answer from the network
            if request.hasInterceptors(under: configuration) {
                exchanged = try await intercepted(received, request, sent)
            }
            try validate(exchanged, for: sent, extra: request.validators, usesSession: request.usesSessionValidators)
            let value = try request.decode(exchanged)
            if let cacheStep, let requestTime, !storesFirst, !cacheInfo.wasRevalidated {
                cacheInfo.wasStored = await cacheStep.store(received, requestTime: requestTime)
            }
            return makeResponse(value, exchanged, cacheInfo: cacheInfo, call: call, attempts: attempts)
        } catch {
            let failure = Self.normalize(error)
            complete(call, failure, attempts: attempts)
            throw failure
        }
    }

    /// The driver of the call's ``CallStateMachine``, for every kind of call: does what the machine says (an
    /// attempt, a resend, a wait, a credential refresh) and tells it what happened, until it delivers an answer
    /// or fails. `role` is the call's part in the pool, which its first attempt plays. `attempt` makes one attempt
    /// with the request as signed for it; `next` lets an answer that is not delivered go, and gives back what the
    /// machine says the attempt held, before the machine's next step.
    ///
    /// Inlined into its callers, so each attempt runs in their frame and a call that decides nothing pays no
    /// frame for the machine.
    @inline(__always)
    nonisolated(nonsending) func drive<Answer: ResponseHead>(
        _ call: Call,
        as role: FirstCall? = nil,
        attempt: nonisolated(nonsending) (PreparedRequest, inout CallStateMachine) async throws -> Answer,
        next: nonisolated(nonsending) (Answer?, CallStateMachine.Leaving) async -> Void
    ) async throws -> (answer: Answer, attempts: Int) {
        let retrier = call.request.retryPolicy ?? configuration.retryPolicy
        retrier?.callWillStart(call.prepared)
        var machine = CallStateMachine(call.prepared, hasRetryRule: retrier != nil, deadline: call.deadline)
        let answer = try await drive(
            call,
            machine: &machine,
            from: machine.start(as: role),
            retrier: retrier,
            attempt: attempt,
            next: next
        )
        return (answer, machine.attempt)
    }

    /// The driver's loop, from `action` on, with `machine` as the call has it: ``drive(_:as:attempt:next:)``'s,
    /// and the way back into it for a call that goes on after an answer was delivered (a WebSocket whose
    /// connection dropped: the machine heard ``CallStateMachine/bodyFailed(_:)`` and the retry rule). `failure`
    /// is what ended the connection before, for the retry's log line.
    @inline(__always)
    nonisolated(nonsending) func drive<Answer: ResponseHead>(
        _ call: Call,
        machine: inout CallStateMachine,
        from action: CallStateMachine.Action,
        retrier: (any RequestRetrier)?,
        after failure: CourierError? = nil,
        attempt: nonisolated(nonsending) (PreparedRequest, inout CallStateMachine) async throws -> Answer,
        next: nonisolated(nonsending) (Answer?, CallStateMachine.Leaving) async -> Void
    ) async throws -> Answer {
        let (request, prepared) = (call.request, call.prepared)
        let credentials = request.credentials(under: configuration)
        var generation = 0  // of the credential the attempt carries
        // what ended the last attempt, for the retry's log line (none made on the way of a success)
        var failure = failure
        var action = action
        while true {
            switch action {
            case .exchange, .resend:
                if case .resend = action {
                    call.log?.retry(prepared, attempt: machine.attempt, delay: .zero, error: failure ?? .cancelled())
                }
                var answer: Answer?
                do {
                    var sending = prepared
                    if let credentials { generation = credentials.apply(to: &sending) }
                    let received = try await attempt(sending, &machine)
                    let refused =
                        credentials?.isRefusal(received.status, headers: received.headers) == true ? generation : nil
                    let retryAfter = received.value(of: .retryAfter)
                    action = machine.answered(received.status, retryAfter: retryAfter, refusedGeneration: refused)
                    action = machine.asking(retrier, about: prepared, action)
                    if case .deliver = action { return received }
                    var refusal = CourierError.httpStatus(received.status, bodyPreview: nil)
                    refusal.retryAfterValue = retryAfter
                    failure = refusal
                    answer = received
                } catch {
                    let ended = timedOut(error, call)
                    failure = ended
                    action = machine.failed(ended)
                    action = machine.asking(retrier, about: prepared, action)
                }
                await next(answer, machine.attemptLeft())
            case .wait(let delay):
                do {
                    try await pause(call, attempt: machine.attempt, delay: delay, error: failure ?? .cancelled())
                    action = machine.slept()
                } catch {
                    action = machine.cancelled()
                }
            case .refresh(let refused):
                do {
                    try await credentials?.refresh(after: refused, call: call)
                    action = call.isCancelled ? machine.cancelled() : machine.refreshed()
                } catch {
                    action = machine.refreshFailed(error)
                }
            case .deliver, .askRetryRule, .done:
                // Handled where the answer arrived; a bug if met here, reported as a typed error.
                action = .fail(
                    CourierError(code: .invalidState, message: "the call's machine met \(action) out of turn")
                )
            case .fail(let error):
                if error.code == .cancelled { for monitor in call.monitors { monitor.willCancel(prepared) } }
                complete(call, error, attempts: machine.attempt)
                throw error
            }
        }
    }

    /// Tells the monitors and the log, then waits; throws ``CourierError/Code/cancelled`` if the call is
    /// cancelled meanwhile.
    private nonisolated(nonsending) func pause(
        _ call: Call,
        attempt: Int,
        delay: Duration,
        error: CourierError
    ) async throws {
        for monitor in call.monitors {
            monitor.willRetry(call.prepared, attempt: attempt, delay: delay, error: error)
        }
        metrics?.retry(method: call.prepared.method)
        call.log?.retry(call.prepared, attempt: attempt, delay: delay, error: error)
        try await CancellableSleep.sleep(for: delay, call: call)
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
