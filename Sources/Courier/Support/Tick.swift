#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A `ContinuousClock` instant as nanoseconds since a fixed instant of the process: a plain integer, so the
/// structs and async frames that hold one have a fixed layout.
///
/// `ContinuousClock.Instant` is a resilient type of the standard library. A struct holding one has no fixed
/// layout, so every copy of it goes through the runtime's value witnesses, and an async function keeps each such
/// value in memory of its own from the task allocator: a plain GET that carried its start, deadline and first
/// byte as instants made 59 task allocations, most of them for these (see TheRequestPath). The request path keeps
/// its times as ticks and makes instants only where the public API shows one.
struct Tick: Comparable, Hashable, Sendable {
    private static let origin = ContinuousClock.now
    let nanoseconds: Int64

    init(_ instant: ContinuousClock.Instant) {
        nanoseconds = Self.nanoseconds(Self.origin.duration(to: instant))
    }

    /// `duration` as a tick: the instant that long after the origin.
    init(_ duration: Duration) {
        nanoseconds = Self.nanoseconds(duration)
    }

    private init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// A tick later than any a call meets: the deadline of a call that has none.
    static let distantFuture = Tick(nanoseconds: limit)

    /// The current time. Never inlined: the standard library's `ContinuousClock.Instant` has a layout the compiler
    /// cannot see, so an async function that read the clock itself would take a task allocation for it at entry,
    /// whether or not the path it takes reads the clock (seven of them in the request path's busiest frame).
    @inline(never)
    static var now: Tick { Tick(ContinuousClock.now) }

    var instant: ContinuousClock.Instant { Self.origin + .nanoseconds(nanoseconds) }

    /// This tick on the wall clock: now, less the time since the tick.
    var date: Date { Date(timeIntervalSinceNow: -Double(Tick.now.nanoseconds &- nanoseconds) / 1e9) }

    /// How long from this tick to `other` (negative when `other` is earlier).
    func duration(to other: Tick) -> Duration { .nanoseconds(other.nanoseconds &- nanoseconds) }

    static func < (lhs: Tick, rhs: Tick) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
    static func + (lhs: Tick, rhs: Tick) -> Tick { Tick(nanoseconds: clamped(lhs.nanoseconds &+ rhs.nanoseconds)) }
    /// `duration` after `lhs`, saturated like every tick.
    static func + (lhs: Tick, rhs: Duration) -> Tick { lhs + Tick(rhs) }

    /// Whole nanoseconds of `duration`, saturated to a quarter of `Int64`'s range either way: a deadline centuries
    /// away stays far away, and the sum of two ticks cannot overflow before it is saturated again.
    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflowed) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflowedAgain) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflowed || overflowedAgain { return seconds < 0 ? -limit : limit }
        return clamped(sum)
    }

    private static let limit = Int64.max / 4

    private static func clamped(_ nanoseconds: Int64) -> Int64 { min(max(nanoseconds, -limit), limit) }
}
