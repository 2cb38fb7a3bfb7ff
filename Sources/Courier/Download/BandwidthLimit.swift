/// A token bucket of bytes: at most `bytesPerSecond` on average, with bursts of up to a quarter second's worth.
/// One limiter can be shared by every connection of a download, or by every download of a manager.
final class BandwidthLimit: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let bytesPerSecond: Int
    private let burst: Double
    private let bucket: Locked<Bucket>

    /// A limiter of `bytesPerSecond` (at least 1).
    init(bytesPerSecond: Int) {
        self.bytesPerSecond = max(1, bytesPerSecond)
        burst = max(16 * 1024, Double(self.bytesPerSecond) / 4)
        bucket = Locked(Bucket(tokens: burst, updated: .now))
    }

    /// Takes `count` bytes from the bucket, waiting until the rate allows them. The bucket may go into debt,
    /// so a large chunk passes at once and the next one waits for it.
    func take(_ count: Int) async throws {
        let wait = bucket.withLock { bucket -> Double in
            let now = ContinuousClock.now
            let elapsed = bucket.updated.duration(to: now).seconds
            bucket.tokens = min(burst, bucket.tokens + elapsed * Double(bytesPerSecond)) - Double(count)
            bucket.updated = now
            return bucket.tokens < 0 ? -bucket.tokens / Double(bytesPerSecond) : 0
        }
        if wait > 0 { try await Task.sleep(for: .seconds(wait)) }
    }
}
