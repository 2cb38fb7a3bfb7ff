extension Duration {
    /// The duration in whole nanoseconds, `Int64.max` when it is longer than that can hold.
    package var clampedNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds.multipliedReportingOverflow(by: 1_000_000_000).overflow
            ? .max : seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
