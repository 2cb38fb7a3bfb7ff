import NIOCore

/// How a request body's writer waits for a chunk it handed to the connection.
enum BodyWriteWait {
    /// Waits until `write` has gone out (`true`), or until the server has answered (`false`, see ``EarlyAnswer``).
    ///
    /// Throws ``StalledBodyWrite`` when the connection takes no byte for `idle`: a server that stopped reading
    /// would otherwise hold the request for ever, since the read-idle timeout starts only once the body is sent,
    /// and AsyncHTTPClient's write timeout counts only the time the body's producer is slow.
    static func wait(for write: EventLoopFuture<Void>, earlyAnswer: EarlyAnswer?, idle: Duration) async throws -> Bool {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
            let once = Locked(false)
            @Sendable func resume(_ result: Result<Bool, any Error>) {
                guard
                    once.withLock({ done in
                        defer { done = true }
                        return !done
                    })
                else { return }
                continuation.resume(with: result)
            }
            let watchdog = write.eventLoop.scheduleTask(in: TimeAmount(idle)) { resume(.failure(StalledBodyWrite())) }
            write.whenComplete { result in
                watchdog.cancel()
                resume(result.map { true })
            }
            earlyAnswer?.whenAnswered {
                watchdog.cancel()
                resume(.success(false))
            }
        }
    }
}

/// Thrown by a request body's writer when the connection took no byte for the read-idle time; the transport
/// reports it as ``CourierError/TimeoutKind/writeIdle``.
struct StalledBodyWrite: Error {}
