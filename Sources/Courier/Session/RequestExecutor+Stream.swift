import Foundation

/// A transfer whose body its caller reads: the call machine up to the head, the pool until the body ends.
extension RequestExecutor {
    /// Sends `request` as a transfer whose body its caller reads (``Session/stream(_:)``, each exchange of a
    /// download): the pool tracks it until the body has been read (``RequestPool/open(_:deadline:failure:_:)``),
    /// and the same call machine decides its attempts up to the head (the retry rule, a stale connection, a
    /// credential refresh). Validators and the cache stay out of it: the caller reads the body.
    nonisolated(nonsending) func stream(_ request: ErasedRequest) async throws -> StreamedResponse {
        let start = Tick.now
        do {
            let prepared = try await RequestPreparation(snapshot: snapshot).prepare(request)
            let call = makeCall(request, prepared: prepared, start: start)
            let failure: @Sendable (any Error) -> CourierError = { [self] in timedOut($0, call) }
            let (method, url, sentBytes) = (request.method, prepared.url, prepared.body.length)
            let (answer, lease) = try await pool.open(
                call,
                failure: failure,
                ended: { [self] status, failure in  // when the body ends: the duration is the whole transfer's
                    record(
                        status: status,
                        failure: failure,
                        method: method,
                        url: url,
                        start: start,
                        sentBytes: sentBytes
                    )
                }
            ) { _ in
                try await drive(call) { sending in
                    try await open(call, sending)
                } next: { answer in
                    guard let answer else { return }
                    do { for try await _ in answer.response.body {} } catch {}  // let the connection be reused
                }.answer
            }
            call.log.responseHead(answer.status, answer.headers, for: answer.sent, since: start)
            let body = LeasedBody(answer.response, lease: lease, failure: failure)
            return StreamedResponse(
                url: answer.sent.url,
                status: answer.status,
                headers: answer.headers,
                version: answer.response.version,
                body: ByteStream(body),
                isContentDecoded: answer.response.isContentDecoded
            )
        } catch {
            throw userFacing(error)
        }
    }
}
