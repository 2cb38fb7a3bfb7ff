import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The cache's part in one request: the key, the decision machine, and the entry being revalidated. `nil` when
/// the session has no cache, the policy is ``CachePolicy/networkOnly``, or the request cannot be cached (a
/// file or stream body, or conditional headers of the caller's own, or a `Range` the cache does not answer: one
/// byte range of a GET under ``CachePolicy/http`` it does, see ``PartialContent``).
struct CacheStep: Sendable {
    let cache: ResponseCache
    let key: CacheKey
    let decision: CacheDecision
    /// The request's URL: an answer that came from elsewhere (a redirect's) is stored under its own.
    private let url: URL
    /// The entry a conditional request revalidates; a 304 turns into its body.
    var revalidating: CacheEntry?
    private let metrics: CourierMetrics?

    init?(snapshot: SessionSnapshot, policy: CachePolicy, request: PreparedRequest) {
        guard let cache = snapshot.configuration.cache, policy.usesCache,
            // RFC 9111 caches neither POST nor the rest
            policy != .http || request.method == .get || request.method == .head,
            !request.headers.contains(where: { Self.callerOwned.contains($0.name) })
        else { return nil }
        let decision = CacheDecision(policy: policy, options: cache.options, request: request)
        guard decision.range != nil || !request.headers.contains(.range),
            let key = CacheKey(request, namespace: cache.options.namespace)
        else { return nil }
        self.cache = cache
        self.key = key
        self.decision = decision
        self.url = request.url
        self.metrics = snapshot.metrics  // looked up once per configuration, not per request
    }

    /// Counts an answer from the cache, in its statistics and the metrics.
    func recordHit() {
        cache.recordHit()
        metrics?.cacheHit()
    }

    /// Counts a request the cache could not answer, in its statistics and the metrics.
    func recordMiss() {
        cache.recordMiss()
        metrics?.cacheMiss()
    }

    /// Headers that make the caller's request conditional: the cache stays out of its way.
    private static let callerOwned: Set<HTTPField.Name> = [
        .ifNoneMatch, .ifModifiedSince, .ifMatch, .ifUnmodifiedSince, .ifRange,
    ]

    /// The `Age` field of an answer from the cache: its current age in whole seconds (RFC 9111 §5.1).
    static func ageField(_ age: Duration) -> String { String(max(0, age.components.seconds)) }

    /// `request` made conditional on ``revalidating``.
    func conditional(_ request: PreparedRequest) -> PreparedRequest {
        guard let revalidating else { return request }
        var request = request
        for field in decision.conditionalHeaders(for: revalidating) { request.headers[field.name] = field.value }
        return request
    }

    /// A 304 to a conditional request becomes the stored body with the 304's headers merged in, and the
    /// refreshed entry is stored. Anything else passes through.
    func merge(_ answer: ResponseBody, requestTime: Date) async -> (ResponseBody, CacheInfo) {
        guard answer.status.code == 304, let revalidating else { return (answer, .network) }
        let now = Date()
        let refreshed = decision.revalidated(
            revalidating,
            notModified: answer.headers,
            requestTime: requestTime,
            responseTime: now
        )
        await cache.store(refreshed)
        cache.recordRevalidation()
        recordHit()
        let age = refreshed.age(at: now)
        var headers = refreshed.headers
        headers[.age] = Self.ageField(age)
        var merged = ResponseBody(
            status: HTTPResponse.Status(code: refreshed.status),
            headers: headers,
            data: refreshed.body
        )
        (merged.sent, merged.firstByte, merged.connection) = (answer.sent, answer.firstByte, answer.connection)
        return (merged, CacheInfo(isFromCache: true, age: age, wasRevalidated: true, wasStored: true))
    }

    /// Stores an answer when the policy and the response allow; returns whether it did. A response that varies
    /// (`Vary`) keeps the URL's key while its variant is the one stored there; another variant goes beside it,
    /// under a key of its own (see ``CacheKey/variant(_:)``), so variants no longer evict each other.
    ///
    /// An answer that followed redirects is stored under the URL that answered it, not the one that redirected
    /// (RFC 9111 §2: a response is stored under its own target URI; the redirect itself, never heuristically
    /// fresh, is not kept), so the first URL is asked again and the final one is a hit.
    func store(_ body: ResponseBody, requestTime: Date) async -> Bool {
        recordMiss()
        var key = self.key
        if let sent = body.sent, sent.url != url {
            guard let own = CacheKey(sent, namespace: cache.options.namespace) else { return false }
            key = own
        }
        guard var entry = decision.entryToStore(body, key: key, requestTime: requestTime, responseTime: Date()) else {
            return false
        }
        if entry.status == 206 {  // combined with what is stored of the same version (RFC 9111 §3.4)
            await cache.store(PartialContent.combine(await cache.lookup(key), with: entry))
            return true
        }
        if !entry.varyingRequestHeaders.isEmpty, let primary = await cache.lookup(key), !decision.matchesVary(primary) {
            entry.key = key.variant(entry.varyingRequestHeaders).text
        }
        await cache.store(entry)
        return true
    }

    /// The stored answer for this request: the URL's entry when its variant fits the request, else the entry of
    /// the request's own variant, if one was stored. `Vary` is checked again by the decision.
    func lookup() async -> CacheEntry? {
        guard let primary = await cache.lookup(key) else { return nil }
        if decision.matchesVary(primary) { return primary }
        guard let names = CacheDecision.varyNames(primary.headers), !names.isEmpty else { return primary }
        return await cache.lookup(key.variant(decision.requestValues(for: names))) ?? primary
    }
}

extension RequestExecutor {
    /// The methods RFC 9110 §9.2.1 defines as safe; every other one is unsafe.
    private static let safeMethods: Set<HTTPRequest.Method> = [.get, .head, .options, .trace]

    /// After an unsafe method got a non-error answer (1xx to 3xx), removes what the cache holds for the request's
    /// URL and for the answer's `Location` and `Content-Location` on the same origin, every variant and every
    /// caller's (RFC 9111 §4.4). An error answer (a 5xx) changed nothing, so it invalidates nothing.
    func invalidateAfterUnsafe(_ request: PreparedRequest, status: HTTPResponse.Status, headers: HTTPFields) async {
        guard let cache = configuration.cache, !Self.safeMethods.contains(request.method), status.code < 400 else {
            return
        }
        var targets = [request.url]
        for name in [HTTPField.Name.location, .contentLocation] {
            guard let value = headers[name], let target = URL(string: value, relativeTo: request.url)?.absoluteURL,
                RedirectState.sameOrigin(request.url, target)
            else { continue }
            targets.append(target)
        }
        await cache.removeAll(exactURLs: targets)
    }

    /// Runs `request` under its cache policy: answers from the cache, revalidates, or asks the network and
    /// stores the answer; falls back to the cache when the policy allows and the network fails.
    func runCached(
        _ request: ErasedRequest,
        prepared: PreparedRequest,
        step: CacheStep,
        start: Tick
    ) async throws -> ErasedResponse {
        let stored = await step.lookup()
        switch step.decision.lookup(stored, now: Date()) {
        case .serve(let entry, let age):
            step.recordHit()
            guard let range = step.decision.range, let (headers, data) = PartialContent.answer(range, from: entry)
            else {
                return try await respond(request, prepared: prepared, from: entry, age: age, start: start)
            }
            // A range, which the decision served only because the entry holds every byte of it.
            var fields = headers
            fields[.age] = CacheStep.ageField(age)
            return try await respond(
                request,
                prepared: prepared,
                body: ResponseBody(status: .partialContent, headers: fields, data: data),
                info: CacheInfo(isFromCache: true, age: age),
                start: start
            )
        case .serveStale(let entry, let age):
            step.recordHit()
            var refresh = step
            refresh.revalidating = entry
            refreshes.start(step.key) { [self, refresh] in
                // Its outcome is the refreshed entry in the cache; a failure leaves the stale one, as RFC 5861 has it.
                _ = try? await network(
                    request,
                    prepared: refresh.conditional(prepared),
                    cacheStep: refresh,
                    start: .now
                )
            }
            return try await respond(request, prepared: prepared, from: entry, age: age, start: start)
        case .miss:
            step.recordMiss()
            throw CourierError(
                code: .cacheMiss,
                message:
                    "nothing usable in the cache for \(prepared.method) \(configuration.redactor.redact(url: prepared.url))"
            )
        case .fetch(let revalidating, let fallback):
            var fetching = step
            fetching.revalidating = revalidating
            do {
                if revalidating == nil, step.decision.range == nil,
                    let coordinator = step.cache.disk as? any CacheFillCoordinator
                {
                    return try await fillOnce(
                        request,
                        prepared: prepared,
                        step: step,
                        coordinator: coordinator,
                        start: start
                    )
                }
                return try await network(
                    request,
                    prepared: fetching.conditional(prepared),
                    cacheStep: fetching,
                    start: start
                )
            } catch {
                let failure = Self.normalize(error)
                guard let (entry, age) = step.decision.fallback(after: failure, entry: fallback, now: Date()) else {
                    throw failure
                }
                step.recordHit()
                return try await respond(request, prepared: prepared, from: entry, age: age, start: start)
            }
        }
    }

    /// A miss of a store shared by several processes: one of them fetches, the others use what it stored
    /// (checked against this request's policy and `Vary` like any entry; when it does not fit, this one fetches).
    private func fillOnce(
        _ request: ErasedRequest,
        prepared: PreparedRequest,
        step: CacheStep,
        coordinator: any CacheFillCoordinator,
        start: Tick
    ) async throws -> ErasedResponse {
        let deadline = start + configuration.timeouts.applying(request.timeouts).total
        let fill = try await coordinator.fill(step.key, waitingUntil: deadline.instant) { [self] in
            try await network(request, prepared: prepared, cacheStep: step, start: start)
        }
        switch fill {
        case .fetched(let response):
            return response
        case .filled(let entry):
            if case .serve(let entry, let age) = step.decision.lookup(entry, now: Date()) {
                await step.cache.memory?.store(entry)
                step.recordHit()
                return try await respond(request, prepared: prepared, from: entry, age: age, start: start)
            }
            return try await network(request, prepared: prepared, cacheStep: step, start: start)
        }
    }

    /// Yields the cached answer (if any), then the network's, stored on its way: ``Session/responses(for:)``. It
    /// takes the road of a send (``observed(_:known:_:)``): one span, the accessories and the metrics see the call,
    /// whose outcome is the network's answer.
    func runCacheThenNetwork(
        _ request: ErasedRequest,
        known: ResolvedURL?,
        yield: (ErasedResponse) throws -> Void
    ) async throws {
        _ = try await observed(request, known: known) { prepared, start in
            let step = CacheStep(snapshot: snapshot, policy: .cacheThenNetwork, request: prepared)
            if let step, let cached = await cachedResponse(request, prepared: prepared, step: step) {
                try yield(cached)
            }
            let response = try await network(request, prepared: prepared, cacheStep: step, start: start)
            try yield(response)
            return response
        }
    }

    /// The cached answer to `request`, if the cache holds one for it (any age, `Vary` respected), without the
    /// network.
    private func cachedResponse(
        _ request: ErasedRequest,
        prepared: PreparedRequest,
        step: CacheStep
    ) async -> ErasedResponse? {
        guard let entry = await step.lookup(), step.decision.matchesVary(entry) else { return nil }
        let age = entry.age(at: Date())
        guard let response = try? await respond(request, prepared: prepared, from: entry, age: age, start: .now)
        else { return nil }
        step.recordHit()
        return response
    }

    /// A response built from a stored entry `age` old, intercepted, validated and decoded like one from the network.
    private func respond(
        _ request: ErasedRequest,
        prepared: PreparedRequest,
        from entry: CacheEntry,
        age: Duration,
        start: Tick
    ) async throws -> ErasedResponse {
        var headers = entry.headers
        headers[.age] = CacheStep.ageField(age)  // the answer says how old it is (RFC 9111 §5.1)
        let body = ResponseBody(status: HTTPResponse.Status(code: entry.status), headers: headers, data: entry.body)
        let info = CacheInfo(isFromCache: true, age: age)
        return try await respond(request, prepared: prepared, body: body, info: info, start: start)
    }
}
