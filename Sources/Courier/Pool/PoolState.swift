import Foundation

/// What a request tells the pool about itself when it registers.
struct PoolTicket: Sendable {
    let request: PreparedRequest
    let parameterSignature: String
    let priority: RequestPriority

    init<R>(_ request: PreparedRequest, from original: Request<R>) {
        self.request = request
        var parameters = original.query
        parameters.merge(original.parameters) { _, own in own }
        parameterSignature = Self.signature(parameters, url: URLBuilder.absoluteURL(original.path))
        priority = original.priority
    }

    /// Sorted, form-encoded pairs of `parameters` and the query items of `url`.
    static func signature(_ parameters: Parameters, url: URL?) -> String {
        var pairs = FormEncoding.pairs(parameters)
        if let url, let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems {
            pairs += items.map { "\(FormEncoding.escape($0.name))=\(FormEncoding.escape($0.value ?? ""))" }
        }
        return pairs.sorted().joined(separator: "&")
    }

    /// `url` without its query and fragment: what "all requests to a URL" compares.
    static func stripQuery(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.query = nil
        components.fragment = nil
        return components.url ?? url
    }
}

/// Where a request waiting for a slot is.
enum SlotWaiter {
    case waiting(CheckedContinuation<Void, any Error>)
    /// Cancelled between asking the scheduler and parking its continuation.
    case cancelledBeforeWaiting
}

/// Everything the ``RequestPool`` guards with its lock.
struct PoolState {
    struct Entry {
        var info: PooledRequest
        var cancel: (@Sendable () -> Void)?
        var cancelRequested = false
        var hasStarted = false
    }

    var scheduler: RequestScheduler
    var entries: [RequestID: Entry] = [:]
    var slotWaiters: [RequestID: SlotWaiter] = [:]
    private var nextID: UInt64 = 0
    private var rules: [RateLimitRule]
    private var buckets: [Int: TokenBucket] = [:]

    init(scheduling: SchedulingOptions) {
        scheduler = RequestScheduler(limits: scheduling.limits)
        rules = scheduling.rateLimits
    }

    mutating func register(_ ticket: PoolTicket) -> RequestID {
        nextID += 1
        let id = RequestID(rawValue: nextID)
        let info = PooledRequest(id: id, method: ticket.request.method, url: PoolTicket.stripQuery(ticket.request.url),
                                 parameterSignature: ticket.parameterSignature, tag: ticket.request.tag,
                                 priority: ticket.priority, state: .waiting, isCoalesced: false, startDate: Date())
        entries[id] = Entry(info: info)
        return id
    }

    /// Stores how to cancel `id`; `true` when a cancel came before (the caller cancels at once).
    mutating func attach(_ cancel: @escaping @Sendable () -> Void, to id: RequestID) -> Bool {
        guard entries[id] != nil else { return false }
        entries[id]?.cancel = cancel
        return entries[id]?.cancelRequested ?? false
    }

    /// Marks the matching entries cancelled; returns their cancel handles (`nil` for those not attached yet,
    /// which cancel themselves on attaching).
    mutating func requestCancel(where matches: (PooledRequest) -> Bool) -> [(@Sendable () -> Void)?] {
        var handles: [(@Sendable () -> Void)?] = []
        for (id, entry) in entries where matches(entry.info) && !entry.cancelRequested {
            entries[id]?.cancelRequested = true
            handles.append(entry.cancel)
        }
        return handles
    }

    /// Marks `id` running; returns its info when this is its first start (for the `started` event).
    mutating func markRunning(_ id: RequestID, coalesced: Bool) -> PooledRequest? {
        guard let entry = entries[id] else { return nil }
        let first = !entry.hasStarted
        entries[id]?.info.state = .running
        entries[id]?.info.isCoalesced = coalesced
        entries[id]?.hasStarted = true
        return first ? entries[id]?.info : nil
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
