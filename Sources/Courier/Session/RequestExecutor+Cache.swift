import Foundation
import HTTPTypes

/// The cache's part in one request: the key, the decision machine, and the entry being revalidated. `nil` when
/// the session has no cache, the policy is ``CachePolicy/networkOnly``, or the request cannot be cached (a
/// file or stream body, or conditional or range headers of the caller's own).
struct CacheStep: Sendable {
    let cache: ResponseCache
    let key: CacheKey
    let decision: CacheDecision
    /// The entry a conditional request revalidates; a 304 turns into its body.
    var revalidating: CacheEntry?
    private let metrics: CourierMetrics

    init?(snapshot: SessionSnapshot, policy: CachePolicy, request: PreparedRequest) {
        guard let cache = snapshot.configuration.cache, policy.usesCache,
              policy != .http || request.method == .get || request.method == .head,  // RFC 9111 caches neither POST nor the rest
              !request.headers.contains(where: { Self.callerOwned.contains($0.name) }),
              let key = CacheKey(request, namespace: cache.options.namespace) else { return nil }
        self.cache = cache
        self.key = key
        self.decision = CacheDecision(policy: policy, options: cache.options, request: request)
        self.metrics = snapshot.metrics  // looked up once per configuration, not per request
    }

    /// Counts an answer from the cache, in its statistics and the metrics.
    func recordHit() {
        cache.recordHit()
        metrics.cacheHit()
    }

    /// Counts a request the cache could not answer, in its statistics and the metrics.
    func recordMiss() {
        cache.recordMiss()
        metrics.cacheMiss()
    }

    /// Headers that make the caller's request conditional or partial: the cache stays out of its way.
    private static let callerOwned: Set<HTTPField.Name> = [.ifNoneMatch, .ifModifiedSince, .ifMatch, .ifUnmodifiedSince, .ifRange, .range]

    /// `request` made conditional on ``revalidating``.
    func conditional(_ request: PreparedRequest) -> PreparedRequest {
        guard let revalidating else { return request }
        var request = request
        for field in decision.conditionalHeaders(for: revalidating) { request.headers[field.name] = field.value }
        return request
    }

    /// A 304 to a conditional request becomes the stored body with the 304's headers merged in, and the
    /// refreshed entry is stored. Anything else passes through.
    func merge(_ exchanged: ExchangeResult, requestTime: Date) async -> (ExchangeResult, CacheInfo) {
        guard exchanged.body.status.code == 304, let revalidating else { return (exchanged, .network) }
        let now = Date()
        let refreshed = decision.revalidated(revalidating, notModified: exchanged.body.headers, requestTime: requestTime, responseTime: now)
        await cache.store(refreshed)
        cache.recordRevalidation()
        recordHit()
        let body = ResponseBody(status: HTTPResponse.Status(code: refreshed.status), headers: refreshed.headers, data: refreshed.body)
        let merged = ExchangeResult(sent: exchanged.sent, body: body, firstByte: exchanged.firstByte)
        return (merged, CacheInfo(isFromCache: true, age: refreshed.age(at: now), wasRevalidated: true, wasStored: true))
    }

    /// Stores a validated, decoded answer when the policy and the response allow; returns whether it did.
    func store(_ body: ResponseBody, requestTime: Date) async -> Bool {
        recordMiss()
        guard let entry = decision.entryToStore(body, key: key, requestTime: requestTime, responseTime: Date()) else { return false }
        await cache.store(entry)
        return true
    }
}

extension RequestExecutor {
    /// Methods whose success makes the cached GET of their URL out of date (RFC 9111 §4.4).
    private static let unsafeMethods: Set<HTTPRequest.Method> = [.post, .put, .delete, .patch]

    /// Removes the cached GET of `request`'s URL after an unsafe method succeeded on it.
    func invalidateAfterUnsafe(_ request: PreparedRequest) async {
        guard let cache = configuration.cache, Self.unsafeMethods.contains(request.method) else { return }
        await cache.remove(CacheKey(method: .get, url: request.url, namespace: cache.options.namespace))
    }

    /// Runs `request` under its cache policy: answers from the cache, revalidates, or asks the network and
    /// stores the answer; falls back to the cache when the policy allows and the network fails.
    func runCached(_ request: ErasedRequest, prepared: PreparedRequest, step: CacheStep, startDate: Date,
                   start: Tick) async throws -> ErasedResponse {
        let stored = await step.cache.lookup(step.key)
        switch step.decision.lookup(stored, now: Date()) {
        case .serve(let entry, let age):
            step.recordHit()
            return try respond(request, prepared: prepared, from: entry, info: CacheInfo(isFromCache: true, age: age), startDate: startDate, start: start)
        case .serveStale(let entry, let age):
            step.recordHit()
            var refresh = step
            refresh.revalidating = entry
            refreshes.start(step.key) { [self, refresh] in
                // Its outcome is the refreshed entry in the cache; a failure leaves the stale one, as RFC 5861 has it.
                _ = try? await network(request, prepared: refresh.conditional(prepared), cacheStep: refresh, startDate: Date(), start: .now)
            }
            return try respond(request, prepared: prepared, from: entry, info: CacheInfo(isFromCache: true, age: age), startDate: startDate, start: start)
        case .miss:
            step.recordMiss()
            throw CourierError(code: .cacheMiss, message: "nothing usable in the cache for \(prepared.method) \(configuration.redactor.redact(url: prepared.url))")
        case .fetch(let revalidating, let fallback):
            var fetching = step
            fetching.revalidating = revalidating
            do {
                if revalidating == nil, let coordinator = step.cache.disk as? any CacheFillCoordinator {
                    return try await fillOnce(request, prepared: prepared, step: step, coordinator: coordinator, startDate: startDate, start: start)
                }
                return try await network(request, prepared: fetching.conditional(prepared), cacheStep: fetching, startDate: startDate, start: start)
            } catch {
                let failure = Self.normalize(error)
                guard let (entry, age) = step.decision.fallback(after: failure, entry: fallback, now: Date()) else { throw failure }
                step.recordHit()
                return try respond(request, prepared: prepared, from: entry, info: CacheInfo(isFromCache: true, age: age), startDate: startDate, start: start)
            }
        }
    }

    /// A miss of a store shared by several processes: one of them fetches, the others use what it stored
    /// (checked against this request's policy and `Vary` like any entry; when it does not fit, this one fetches).
    private func fillOnce(_ request: ErasedRequest, prepared: PreparedRequest, step: CacheStep, coordinator: any CacheFillCoordinator,
                          startDate: Date, start: Tick) async throws -> ErasedResponse {
        let deadline = start + configuration.timeouts.applying(request.timeouts).total
        let fill = try await coordinator.fill(step.key, waitingUntil: deadline.instant) { [self] in
            try await network(request, prepared: prepared, cacheStep: step, startDate: startDate, start: start)
        }
        switch fill {
        case .fetched(let response):
            return response
        case .filled(let entry):
            if case .serve(let entry, let age) = step.decision.lookup(entry, now: Date()) {
                await step.cache.memory?.store(entry)
                step.recordHit()
                return try respond(request, prepared: prepared, from: entry, info: CacheInfo(isFromCache: true, age: age), startDate: startDate, start: start)
            }
            return try await network(request, prepared: prepared, cacheStep: step, startDate: startDate, start: start)
        }
    }

    /// Yields the cached answer (if any), then the network's, stored on its way: ``Session/responses(for:)``.
    func runCacheThenNetwork(_ request: ErasedRequest, yield: (ErasedResponse) throws -> Void) async throws {
        let startDate = Date()
        let start = Tick.now
        let prepared = try await RequestPreparation(snapshot: snapshot).prepare(request)
        let step = CacheStep(snapshot: snapshot, policy: .cacheThenNetwork, request: prepared)
        if let step, let cached = await cachedResponse(request, prepared: prepared, step: step) { try yield(cached) }
        try yield(try await network(request, prepared: prepared, cacheStep: step, startDate: startDate, start: start))
    }

    /// The cached answer to `request`, if the cache holds one for it (any age, `Vary` respected), without the
    /// network.
    private func cachedResponse(_ request: ErasedRequest, prepared: PreparedRequest, step: CacheStep) async -> ErasedResponse? {
        guard let entry = await step.cache.lookup(step.key), step.decision.matchesVary(entry) else { return nil }
        let info = CacheInfo(isFromCache: true, age: entry.age(at: Date()))
        guard let response = try? respond(request, prepared: prepared, from: entry, info: info, startDate: Date(), start: .now) else { return nil }
        step.recordHit()
        return response
    }

    /// A response built from a stored entry, validated and decoded like one from the network.
    private func respond(_ request: ErasedRequest, prepared: PreparedRequest, from entry: CacheEntry, info: CacheInfo,
                         startDate: Date, start: Tick) throws -> ErasedResponse {
        let body = ResponseBody(status: HTTPResponse.Status(code: entry.status), headers: entry.headers, data: entry.body)
        try validate(body, for: prepared, extra: request.validators, usesSession: request.usesSessionValidators)
        let value = try request.decode(body)
        let now = Tick.now
        return Response(value: value, request: prepared, status: body.status, headers: body.headers, body: body.data, cacheInfo: info,
                        timing: Timing(startDate: startDate, startTick: start, firstByteTick: now, endTick: now))
    }
}
