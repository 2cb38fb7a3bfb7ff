/// Exponential backoff, the one rule every wait after a failure in Courier follows: `base × 2^(n−1)` after the
/// `n`th failure in a row, never more than `maximum`. ``RetryPolicy`` draws a random delay below it (full jitter);
/// event streams and resumable uploads wait it out as it is.
package struct Backoff: Sendable, Hashable {
    /// The wait after the first failure.
    package var base: Duration
    /// The longest wait.
    package var maximum: Duration

    package init(base: Duration, maximum: Duration) {
        self.base = base
        self.maximum = maximum
    }

    /// The wait after the `failures`th failure in a row (1 for the first; below 1 counts as 1).
    package func delay(after failures: Int) -> Duration {
        let exponent = min(max(failures, 1) - 1, 30)  // 2^30 times any sane base is past any sane maximum
        return min(maximum, base * (1 << exponent))
    }
}
