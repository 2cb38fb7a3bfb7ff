#if COURIER_LOCK_COUNTS
import NIOConcurrencyHelpers
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value only one thread touches at a time: the role of Synchronization's `Mutex`, on a pthread mutex instead
/// of a futex.
///
/// ThreadSanitizer sees pthread mutexes; on Linux it does not see the futex inside `Mutex`, so every access
/// made under a `Mutex` looks like a race and real ones drown in the noise. Courier, its test server and its
/// tests use `Locked` so `swift test --sanitize=thread` reports only what is real.
///
/// The value and the mutex live in one object (a `ManagedBuffer`, as SwiftNIO's `NIOLockedValueBox` keeps
/// them): making a `Locked` allocates once, where a class holding NIO's lock allocated twice. Copies share it.
package struct Locked<Value>: @unchecked Sendable {
    // @unchecked Sendable: the value is read and written only inside `withLock`, under the mutex; `sending` on the
    // way in and out keeps a non-Sendable value from being shared outside it, exactly as `Mutex` does.
    private let storage: LockedStorage<Value>

    /// A lock around `value`; `origin` names it in ``LockCounts`` (builds with `COURIER_LOCK_COUNTS=1` only).
    package init(_ value: sending Value, origin: StaticString = #fileID) {
        #if COURIER_LOCK_COUNTS
        storage = LockedStorage.make(value, LockedHeader(origin: "\(origin)"))
        #else
        storage = LockedStorage.make(value, LockedHeader())
        #endif
    }

    /// Runs `body` with the value while holding the lock.
    @inline(__always)
    package func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try storage.withLock(body)
    }
}

/// What a ``Locked`` keeps beside its value: the mutex, and in counting builds the file that made the lock.
struct LockedHeader {
    var mutex = pthread_mutex_t()
    #if COURIER_LOCK_COUNTS
    /// The file that made the lock, which its round trips are counted under.
    let origin: String
    #endif
}

/// The mutex (the header) and the value (the one element) in one allocation. Both stay where they are for the
/// object's life, as a pthread mutex must.
final class LockedStorage<Value>: ManagedBuffer<LockedHeader, Value> {
    static func make(_ value: sending Value, _ header: LockedHeader) -> LockedStorage<Value> {
        let buffer = create(minimumCapacity: 1) { _ in header }
        let storage = unsafeDowncast(buffer, to: LockedStorage<Value>.self)
        storage.withUnsafeMutablePointers { header, element in
            element.initialize(to: value)
            let made = pthread_mutex_init(&header.pointee.mutex, nil)
            precondition(made == 0, "pthread_mutex_init failed: \(made)")
        }
        return storage
    }

    @inline(__always)
    func withLock<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        // The pointers stay valid past their closures: they point into this object, alive for the whole call.
        let (header, element) = withUnsafeMutablePointers { ($0, $1) }
        #if COURIER_LOCK_COUNTS
        LockCounts.count(header.pointee.origin)
        #endif
        pthread_mutex_lock(&header.pointee.mutex)
        defer { pthread_mutex_unlock(&header.pointee.mutex) }
        // Moved out for `body` and back in, under the mutex (a move copies no reference). `nonisolated(unsafe)`
        // because only the mutex keeps the value from other threads, which the region checker cannot see.
        nonisolated(unsafe) var value = element.move()
        defer { element.initialize(to: value) }
        return try body(&value)
    }

    deinit {
        withUnsafeMutablePointers { header, element in
            _ = element.deinitialize(count: 1)
            _ = pthread_mutex_destroy(&header.pointee.mutex)
        }
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
