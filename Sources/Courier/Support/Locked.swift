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
    #if COURIER_LOCK_COUNTS
    /// The file that made the lock, which its round trips are counted under.
    private let origin: String
    #endif

    /// A lock around `value`; `origin` names it in ``LockCounts`` (builds with `COURIER_LOCK_COUNTS=1` only).
    package init(_ value: sending Value, origin: StaticString = #fileID) {
        self.value = value
        #if COURIER_LOCK_COUNTS
        self.origin = "\(origin)"
        #endif
    }

    /// Runs `body` with the value while holding the lock.
    package func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if COURIER_LOCK_COUNTS
        LockCounts.count(origin)
        #endif
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

#if COURIER_LOCK_COUNTS
/// The lock round trips of every ``Locked`` made in Courier's own files, by the file that made the lock: what
/// `Scripts/lock-count` reads to count a plain GET's. Exists only in builds with `COURIER_LOCK_COUNTS=1`.
package enum LockCounts {
    private static let tally = NIOLockedValueBox<[String: Int]>([:])

    static func count(_ origin: String) {
        guard origin.hasPrefix("Courier/") else { return }  // the test server's and the tests' locks
        tally.withLockedValue { $0[origin, default: 0] += 1 }
    }

    /// The round trips so far, by file, and clears them.
    package static func take() -> [String: Int] {
        tally.withLockedValue { tally in
            defer { tally = [:] }
            return tally
        }
    }
}
#endif
