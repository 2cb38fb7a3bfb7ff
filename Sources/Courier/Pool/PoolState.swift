#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a request waiting for a slot is.
enum SlotWaiter {
    case waiting(CheckedContinuation<Void, any Error>)
    /// Cancelled between asking the scheduler and parking its continuation.
    case cancelledBeforeWaiting
}

/// How a request makes its first call, decided as it registers with the pool (by its sharing key, which its
/// caller keeps).
enum FirstCall: Sendable {
    /// A call of its own, with the slot it was given.
    case own
    /// A call of its own, with the slot it was given, that identical requests (same key) share.
    case leads
    /// It waits for the call an identical request has in flight, without a slot.
    case follows

    /// Whether it takes a slot as it registers.
    var takesSlot: Bool {
        if case .follows = self { false } else { true }
    }
}

/// Everything the ``RequestPool`` guards with its lock.
struct PoolState {
    struct Entry {
        var info: PooledRequest
        /// The call: what cancelling, suspending and resuming the request go through.
        let call: Call
        /// When the pool cancels the request.
        let deadline: Tick
        var hasStarted = false
        /// The caller was cancelled; the request may still run a shared call for others.
        var callerLeft = false
        /// The shared call this request runs for identical ones.
        var leads: CoalescingKey?
        /// Who hears the pool's controls: the request and its accessories, when it has any.
        var listeners: Listeners?

        /// Marks the request running; returns its info when this is its first start.
        mutating func markRunning(coalesced: Bool) -> PooledRequest? {
            let first = !hasStarted
            info.state = .running
            info.isCoalesced = coalesced
            hasStarted = true
            return first ? info : nil
        }
    }

    /// A request's accessories, with the request they are told about.
    struct Listeners {
        let request: PreparedRequest
        let accessories: [any RequestAccessory]

        /// Calls `hook` on each accessory, outside the pool's lock.
        func tell(_ hook: (any RequestAccessory, PreparedRequest) -> Void) {
            for accessory in accessories { hook(accessory, request) }
        }
    }

    /// What ``leave(_:)`` must do outside the lock.
    struct Departure {
        let info: PooledRequest
        let call: Call
        let listeners: Listeners?
        /// Whether to cancel the request: not while it runs a call others wait for.
        let cancelsRequest: Bool
    }

    var scheduler: RequestScheduler
    var entries: [RequestID: Entry] = [:]
    /// Entries whose caller has gone but that still run.
    private(set) var departedCount = 0
    var slotWaiters: [RequestID: SlotWaiter] = [:]
    var calls: [CoalescingKey: SharedCall] = [:]
    /// The requests' deadlines, and when the watcher wakes.
    private(set) var deadlines = DeadlineSchedule()
    /// Followers cancelled before they joined a shared call.
    var cancelledFollowers: Set<RequestID> = []
    /// How many entries are suspended one by one: while none is, queueing looks none up.
    private var suspendedCount = 0
    private var nextID: UInt64 = 0
    private var rules: [RateLimitRule]
    private var buckets: [Int: TokenBucket] = [:]

    init(scheduling: SchedulingOptions) {
        scheduler = RequestScheduler(limits: scheduling.limits)
        rules = scheduling.rateLimits
    }

    /// Adds a request that the pool cancels at `deadline`; returns its id, and a deadline watcher to start when
    /// none wakes in time for it.
    mutating func register(_ call: Call, deadline: Tick) -> (id: RequestID, watcher: DeadlineSchedule.Watcher?) {
        nextID += 1
        let id = RequestID(rawValue: nextID)
        let accessories = call.request.accessories
        entries[id] = Entry(
            info: PooledRequest(id: id, call: call),
            call: call,
            deadline: deadline,
            listeners: accessories.isEmpty ? nil : Listeners(request: call.prepared, accessories: accessories)
        )
        let watcher = deadlines.add(id, tick: deadline)
        if deadlines.count > 2 * entries.count + 64 {  // mostly finished requests' leftovers
            deadlines.rebuild(entries.map { DeadlineSchedule.Due(tick: $0.value.deadline, id: $0.key) })
        }
        return (id, watcher)
    }

    /// The deadline watcher of `generation` woke at `now`: the requests to cancel, and when to wake next.
    mutating func expireDeadlines(
        generation: Int,
        now: ContinuousClock.Instant
    ) -> (due: [Call], next: ContinuousClock.Instant?) {
        let entries = self.entries
        let (expired, next) = deadlines.expire(generation: generation, now: now) { entries[$0.id]?.deadline == $0.tick }
        return (expired.compactMap { entries[$0]?.call }, next)
    }

    /// The caller of `id` goes; `nil` when it already went.
    mutating func leave(_ id: RequestID) -> Departure? {
        guard let index = entries.index(forKey: id), !entries.values[index].callerLeft else { return nil }
        entries.values[index].callerLeft = true
        departedCount += 1
        let entry = entries.values[index]
        let othersWait = entry.leads.map { calls[$0]?.followers.isEmpty == false } ?? false
        return Departure(
            info: entry.info,
            call: entry.call,
            listeners: entry.listeners,
            cancelsRequest: !othersWait
        )
    }

    /// What ends with a request that led a call it never ran (it failed or was cancelled before its slot).
    struct Handover {
        /// The follower that leads the call from now on: resume it with `nil`, and it runs the call for the others.
        var successor: SharedCall.Follower?
        /// Followers whose callers have gone meanwhile: resume them with ``CourierError/Code/cancelled``.
        var departed: [SharedCall.Follower] = []
    }

    /// The request `id` ended: its info unless its caller had already gone (and was told with an event), and what
    /// becomes of a call it led but never ran.
    mutating func finish(_ id: RequestID) -> (info: PooledRequest?, handover: Handover) {
        if !cancelledFollowers.isEmpty { cancelledFollowers.remove(id) }
        guard let entry = entries.removeValue(forKey: id) else { return (nil, Handover()) }
        if entry.info.isSuspended { suspendedCount -= 1 }
        var handover = Handover()
        if let key = entry.leads, let index = calls.index(forKey: key), calls.values[index].leader == id {
            handover = handOn(key, at: index)
        }
        if entry.callerLeft {
            departedCount -= 1
            return (nil, handover)
        }
        return (entry.info, handover)
    }

    /// The call with `key` at `index` in ``calls`` ends without having run: its oldest follower whose caller is
    /// still there leads it instead, or, with none, it goes. A follower whose caller has gone is let go either way:
    /// leading, it would fail the others with its own cancellation.
    private mutating func handOn(_ key: CoalescingKey, at index: [CoalescingKey: SharedCall].Index) -> Handover {
        var waiting = calls.values[index].followers
        var handover = Handover()
        for (follower, wait) in waiting where entries[follower]?.callerLeft != false {
            waiting[follower] = nil
            handover.departed.append(wait)
        }
        guard let next = waiting.keys.min() else {
            calls.remove(at: index)
            return handover
        }
        handover.successor = waiting.removeValue(forKey: next)
        calls.values[index] = SharedCall(leader: next, followers: waiting)
        entries[next]?.leads = key
        return handover
    }

    /// The call `id` leads (with `key`, or the one its entry says) ended: it ran. The requests waiting for its
    /// result, to resume, and whether `id`'s own caller has gone.
    mutating func closeSharedCall(
        _ key: CoalescingKey? = nil,
        ledBy id: RequestID
    ) -> (followers: [SharedCall.Follower], callerLeft: Bool) {
        var callerLeft = true
        var led = key
        if let index = entries.index(forKey: id) {
            led = led ?? entries.values[index].leads
            entries.values[index].leads = nil
            callerLeft = entries.values[index].callerLeft
        }
        guard let key = led, let index = calls.index(forKey: key), calls.values[index].leader == id else {
            return ([], callerLeft)
        }
        return (Array(calls.remove(at: index).value.followers.values), callerLeft)
    }

    /// `id` starts the call identical requests with `key` may share.
    mutating func lead(_ key: CoalescingKey, by id: RequestID) {
        calls[key] = SharedCall(leader: id)
        entries[id]?.leads = key
    }

    /// How the newly registered `id` makes its first call: it follows the call an identical request has in flight
    /// (same `key`), or makes one of its own, which identical requests may share when it has a `key`.
    mutating func firstCall(_ id: RequestID, sharing key: CoalescingKey?) -> FirstCall {
        guard let key else { return .own }
        if calls[key] != nil { return .follows }
        lead(key, by: id)
        return .leads
    }

    /// Where a request asking for a slot stands.
    enum Admission {
        /// Its rate limit fails fast; the next request is allowed after this long.
        case refused(retryAfter: Duration)
        /// Its rate limit makes it wait this long before it queues.
        case rateLimited(Duration)
        /// It queued.
        case admitted(Queueing)
    }

    /// A queued request: started (with its info when this is its first start), or waiting for a slot.
    enum Queueing {
        case started(PooledRequest?)
        case queued
    }

    /// Asks `id`'s rate limit for a token, then queues it for a slot.
    mutating func admit(
        _ id: RequestID,
        url: URL,
        host: String,
        priority: RequestPriority,
        now: ContinuousClock.Instant
    ) -> Admission {
        switch takeRateLimitToken(for: url, now: now) {
        case .refuse(let retryAfter)?: return .refused(retryAfter: retryAfter)
        case .wait(let wait)?:
            markWaiting(id)
            return .rateLimited(wait)
        case nil, .proceed?: return .admitted(queue(id, host: host, priority: priority))
        }
    }

    /// Queues `id` for a slot under the concurrency limits, and starts it when one is free.
    mutating func queue(_ id: RequestID, host: String, priority: RequestPriority) -> Queueing {
        let isHeld = suspendedCount > 0 && entries[id]?.info.isSuspended == true
        switch scheduler.enqueue(id, host: host, priority: priority, held: isHeld) {
        case .start: return .started(markRunning(id, coalesced: false))
        case .wait:
            markWaiting(id)
            return .queued
        }
    }

    /// Suspends `id`: held in the scheduler while it waits, and its reading held through the returned call
    /// while it runs. `nil` when it is not in flight or already suspended.
    mutating func suspend(_ id: RequestID) -> Entry? {
        guard let index = entries.index(forKey: id), !entries.values[index].callerLeft,
            !entries.values[index].info.isSuspended
        else { return nil }
        entries.values[index].info.isSuspended = true
        suspendedCount += 1
        _ = scheduler.hold(id)
        return entries.values[index]
    }

    /// Resumes a suspended `id`: its call, to release its reading, and the waiting requests that start now.
    mutating func resume(_ id: RequestID) -> (entry: Entry, started: [CheckedContinuation<Void, any Error>])? {
        guard let index = entries.index(forKey: id), entries.values[index].info.isSuspended else { return nil }
        entries.values[index].info.isSuspended = false
        suspendedCount -= 1
        return (entries.values[index], start(scheduler.release(id)))
    }

    /// Marks `id` waiting again (behind a limit, a rate limit or a suspended pool).
    mutating func markWaiting(_ id: RequestID) {
        entries[id]?.info.state = .waiting
    }

    /// Marks `id` running; returns its info when this is its first start (for the `started` event).
    mutating func markRunning(_ id: RequestID, coalesced: Bool) -> PooledRequest? {
        guard let index = entries.index(forKey: id) else { return nil }
        return entries.values[index].markRunning(coalesced: coalesced)
    }

    /// Gives back `id`'s slot when it holds one; the continuations of the requests that start in its place.
    mutating func releaseSlot(_ id: RequestID) -> [CheckedContinuation<Void, any Error>] {
        scheduler.isRunning(id) ? start(scheduler.finish(id)) : []
    }

    /// The continuations of requests the scheduler just started.
    mutating func start(_ ids: [RequestID]) -> [CheckedContinuation<Void, any Error>] {
        ids.compactMap { id in
            guard case .waiting(let continuation)? = slotWaiters.removeValue(forKey: id) else { return nil }
            return continuation
        }
    }

    mutating func apply(_ scheduling: SchedulingOptions) -> [CheckedContinuation<Void, any Error>] {
        if scheduling.rateLimits != rules {
            rules = scheduling.rateLimits
            buckets = [:]
        }
        return start(scheduler.setLimits(scheduling.limits))
    }

    /// Asks the first rule covering `url` for a token; `nil` when no rule covers it.
    mutating func takeRateLimitToken(for url: URL, now: ContinuousClock.Instant) -> TokenBucket.Decision? {
        guard let index = rules.firstIndex(where: { $0.covers(url) }) else { return nil }
        var bucket = buckets[index] ?? TokenBucket(rules[index].limit, now: now)
        defer { buckets[index] = bucket }
        return bucket.take(now: now, waits: rules[index].whenLimited == .wait)
    }
}
