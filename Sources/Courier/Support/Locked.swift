import NIOConcurrencyHelpers

/// A value only one thread touches at a time: the role of Synchronization's `Mutex`, on a pthread mutex
/// (`NIOLock`) instead of a futex.
///
/// ThreadSanitizer sees pthread mutexes; on Linux it does not see the futex inside `Mutex`, so every access
/// made under a `Mutex` looks like a race and real ones drown in the noise. Courier, its test server and its
/// tests use `Locked` so `swift test --sanitize=thread` reports only what is real.
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: `value` is read and written only inside `withLock`, under `lock`; `sending` on the way
    // in and out keeps a non-Sendable value from being shared outside it, exactly as `Mutex` does.
    private let lock = NIOLock()
    private var value: Value

    /// A lock around `value`.
    package init(_ value: sending Value) {
        self.value = value
    }

    /// Runs `body` with the value while holding the lock.
    package func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
