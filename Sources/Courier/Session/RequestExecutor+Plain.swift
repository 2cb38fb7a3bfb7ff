import Foundation

extension RequestExecutor {
    /// ``run(_:)`` for a request that uses none of the optional steps (``SessionSnapshot/isPlain``, no accessories
    /// or retry policy of its own): the same outcome, without the frames of the steps it skips. Each async call
    /// copies the request into a frame of its own, and those frames cost a plain GET more than the pool did.
    /// Coalescing, on by default, is not a step of its own here: the pool decides as the request registers
    /// whether it shares a call, and one that makes its own call goes straight to the exchange.
    nonisolated(nonsending) func runPlain(_ request: ErasedRequest) async throws -> ErasedResponse {
        let start = Tick.now
        let startDate = Date()
        var sentBytes: Int64?
        do {
            let prepared = try await RequestPreparation(snapshot: snapshot).prepare(request)
            sentBytes = prepared.body.length
            let timeouts = configuration.timeouts.applying(request.timeouts)
            let deadline = start + timeouts.total
            let key = sharingKey(request, prepared)
            // One call: its own, with the slot the pool gives it on the way in and takes back on the way out, or one
            // that identical requests share.
            let response = try await pool.track(PoolTicket(prepared, from: request), deadline: deadline, sharing: key,
                                                failure: { timedOut($0, prepared, deadline: deadline, timeouts: timeouts) }) { id, canceller, first in
                let log = snapshot.debugLog
                let (limits, cookies) = (limits(for: request), request.cookieHandling(under: snapshot))
                let failure: CourierError
                do {
                    let exchanged = if key == nil {
                        try await exchange(prepared, timeouts: timeouts, deadline: deadline, limits: limits, cookies: cookies, canceller: canceller,
                                           log: log, start: start)
                    } else {
                        try await fetch(request, prepared: prepared, id: id, first: first, sharing: key, canceller: canceller) {
                            try await exchange(prepared, timeouts: timeouts, deadline: deadline, limits: limits, cookies: cookies,
                                               canceller: canceller, log: log, start: start)
                        }
                    }
                    try validate(exchanged.body, for: exchanged.sent, extra: request.validators, usesSession: request.usesSessionValidators)
                    let value = try request.decode(exchanged.body)
                    return makeResponse(value, exchanged, cacheInfo: .network, original: prepared, attempts: 1, startDate: startDate, start: start)
                } catch {
                    failure = timedOut(error, prepared, deadline: deadline, timeouts: timeouts)
                }
                if Self.metStaleConnection(failure, prepared) {  // the general loop sends it again at once, as it would have
                    log.retry(prepared, attempt: 1, delay: .zero, error: failure)
                    pool.releaseSlot(id)  // the loop asks for a slot per attempt
                    return try await attempts(request, prepared: prepared, id: id, canceller: canceller, first: nil, sharing: key,
                                              cacheStep: nil, timeouts: timeouts, deadline: deadline, startDate: startDate, start: start,
                                              retriedStaleConnection: true)
                }
                complete(prepared, failure, attempts: 1, startDate: startDate, start: start, log: log)
                throw failure
            }
            recordSuccess(response, method: request.method, start: start, sentBytes: sentBytes)
            return response
        } catch {
            let failure = userFacing(error)
            recordFailure(failure, method: request.method, start: start, sentBytes: sentBytes)
            throw failure
        }
    }
}
