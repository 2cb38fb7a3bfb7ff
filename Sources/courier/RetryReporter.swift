import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Tells each retry on stderr, as aria2 does: `retry 1/3 after 250 ms: connection refused by …`.
struct RetryReporter: EventMonitor {
    /// The retries allowed, for the `n/total` count.
    let total: Int

    func willRetry(_ request: PreparedRequest, attempt: Int, delay: Duration, error: CourierError) {
        Output.stderr("retry \(attempt)/\(total) after \(delay.formattedSeconds): \(error.message)")
    }
}
