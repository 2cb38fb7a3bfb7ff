/// A token bucket per host that keeps retries to a fraction of requests (the retry budget of Finagle and gRPC).
///
/// Each first attempt deposits ``ratio`` tokens; each retry takes one. A host that fails everything gets at
/// most ``minimumRetries`` plus `ratio × requests` retries, instead of `maxAttempts × requests`.
public final class RetryBudget: Sendable {
    /// Tokens deposited per request.
    public let ratio: Double
    /// Tokens a host starts with, and the most it can save.
    public let minimumRetries: Int
    private let tokens = Locked<[String: Double]>([:])

    /// Creates a budget.
    public init(ratio: Double = 0.2, minimumRetries: Int = 10) {
        self.ratio = ratio
        self.minimumRetries = minimumRetries
    }

    /// Records a first attempt to `host`.
    public func deposit(host: String) {
        tokens.withLock { tokens in
            tokens[host] = min(Double(minimumRetries), (tokens[host] ?? Double(minimumRetries)) + ratio)
        }
    }

    /// Takes one token for a retry to `host`; `false` when none is left.
    public func withdraw(host: String) -> Bool {
        tokens.withLock { tokens in
            let available = tokens[host] ?? Double(minimumRetries)
            guard available >= 1 else { return false }
            tokens[host] = available - 1
            return true
        }
    }
}
