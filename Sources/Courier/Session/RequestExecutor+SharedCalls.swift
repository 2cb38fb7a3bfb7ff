/// How an attempt makes its call: with a slot of its own, or sharing the call of an identical request in flight.
extension RequestExecutor {
    /// The key identical requests share a call by: `nil` when `request` makes a call of its own (coalescing is
    /// off, its cookies differ from the session's, or its method or body cannot be shared).
    func sharingKey(_ request: ErasedRequest, _ prepared: PreparedRequest) -> CoalescingKey? {
        let scheduling = configuration.scheduling
        guard request.coalesces, scheduling.coalescesRequests, request.cookieHandling(under: snapshot) == configuration.cookieHandling else {
            return nil
        }
        return CoalescingKey(prepared, varyingHeaders: scheduling.coalescingHeaders)
    }

    /// Runs one attempt's `exchange`: the call `first` says (the first attempt's, decided as the request
    /// registered), or else once the pool gives the request a slot, or by sharing the call of an identical request
    /// in flight (same `key`). The shared call runs with the settings (timeouts, limits) of the request that
    /// started it.
    @inline(__always)
    nonisolated(nonsending) func fetch(_ request: ErasedRequest, prepared: PreparedRequest, id: RequestID, first: FirstCall?,
                                       sharing key: CoalescingKey?, canceller: Canceller,
                                       _ exchange: nonisolated(nonsending) () async throws -> ExchangeResult) async throws -> ExchangeResult {
        nonisolated(nonsending) func send() async throws -> ExchangeResult {
            try await pool.withSlot(id, url: prepared.url, priority: request.priority, canceller: canceller, exchange)
        }
        switch first {
        case .own?: return try await exchange()
        case .leads(let key)?: return try await pool.runShared(key, by: id, exchange)
        case .follows(let key)?: return try await pool.follow(key, by: id, canceller: canceller, orLead: send)
        case nil:
            guard let key else { return try await send() }
            return try await pool.shared(key, by: id, canceller: canceller, send)
        }
    }
}
