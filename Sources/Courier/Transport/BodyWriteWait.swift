import NIOCore

/// How a request body's writer waits for a chunk it handed to the connection.
enum BodyWriteWait {
    /// The fewest bytes a connection must take per read-idle time not to be taken for stalled.
    static let leastBytesPerIdle = 64 << 10

    /// Waits until `write` (of `bytes`) has gone out (`true`), or until the server has answered (`false`, see
    /// ``EarlyAnswer``).
    ///
    /// Throws ``StalledBodyWrite`` when the connection takes the write slower than ``leastBytesPerIdle`` per
    /// `idle`: `idle` for a write up to 64 KiB, 16 times `idle` for one of 1 MiB. A server that stopped reading
    /// would otherwise hold the request for ever, since the read-idle timeout starts only once the body is sent, and
    /// AsyncHTTPClient's write timeout counts only the time the body's producer is slow. A write is seen only
    /// whole, so the time is scaled rather than the write cut up: cutting 1 MiB chunks into 64 KiB writes doubled
    /// the time of a 1 GiB multipart upload (debug build) and raised its peak memory.
    static func wait(
        for write: EventLoopFuture<Void>,
        bytes: Int,
        earlyAnswer: EarlyAnswer?,
        idle: Duration
    ) async throws -> Bool {
        let idles = Int64(max(1, (bytes + leastBytesPerIdle - 1) / leastBytesPerIdle))
        let (scaled, overflow) = idle.clampedNanoseconds.multipliedReportingOverflow(by: idles)
        let allowed = TimeAmount.nanoseconds(overflow ? .max : scaled)
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
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
            let watchdog = write.eventLoop.scheduleTask(in: allowed) { resume(.failure(StalledBodyWrite())) }
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

/// Thrown by a request body's writer when the connection took the body slower than 64 KiB per read-idle time; the
/// transport reports it as ``CourierError/TimeoutKind/writeIdle``.
struct StalledBodyWrite: Error {}
