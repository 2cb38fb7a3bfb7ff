import HTTPTypes
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What makes two requests the same call: method, resolved URL, the headers that change the answer, and the
/// body bytes (idempotent methods only).
///
/// Its hash is worked out once: the pool looks the key up, inserts and removes it for every request that
/// coalesces, and hashing the URL and the headers each time showed in the profile.
struct CoalescingKey: Hashable, Sendable {
    let method: HTTPRequest.Method
    let url: String
    /// The values of the varying headers, each name's joined with ", ", one line per name.
    let varyingHeaders: String
    let body: Data?
    private let precomputedHash: Int

    /// The key of `request`, or `nil` when it must make its own call: a method that is not idempotent, or a
    /// body that cannot be compared (a file or a stream).
    init?(_ request: PreparedRequest, varyingHeaders names: [HTTPField.Name]) {
        guard request.isIdempotent else { return nil }
        switch request.body {
        case .empty: body = nil
        case .bytes(let data): body = data
        case .file, .stream: return nil
        }
        method = request.method
        url = request.url.absoluteString
        // A conditional request may come back 304, which only a caller holding the same cached entry can use.
        var varying = ""
        func add(_ name: HTTPField.Name) {
            if let value = request.headers.value(of: name) { varying += value }
            varying += "\n"  // no field value holds a line feed
        }
        for name in names { add(name) }
        add(.ifNoneMatch)
        add(.ifModifiedSince)
        varyingHeaders = varying
        var hasher = Hasher()
        hasher.combine(method)
        hasher.combine(url)
        hasher.combine(varyingHeaders)
        hasher.combine(body)
        precomputedHash = hasher.finalize()
    }

    static func == (lhs: CoalescingKey, rhs: CoalescingKey) -> Bool {
        lhs.precomputedHash == rhs.precomputedHash && lhs.method == rhs.method && lhs.url == rhs.url
            && lhs.varyingHeaders == rhs.varyingHeaders
            && lhs.body == rhs.body
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(precomputedHash)
    }
}

/// One call shared by identical requests: the request that started it runs it in its caller's task; the others
/// wait for its result.
struct SharedCall {
    /// A follower's wait: the call's result, or `nil` when it leads the call from now on (the call ended before it
    /// joined, or its leader ended before running it).
    typealias Follower = CheckedContinuation<ResponseBody?, any Error>

    let leader: RequestID
    var followers: [RequestID: Follower] = [:]
}

extension RequestPool {
    /// Single flight: runs `operation` for the request `id`, or waits for the call an identical request (same
    /// `key`) has in flight.
    ///
    /// The leader runs the call in its caller's task, so sharing costs no extra task. A follower that is cancelled
    /// (through `call`) leaves on its own. When the leader's caller goes while followers wait, the call goes
    /// on for them (see ``leave(_:)``); it is cancelled only once every caller has gone.
    nonisolated(nonsending) func shared(
        _ key: CoalescingKey,
        by id: RequestID,
        call: Call,
        _ operation: nonisolated(nonsending) () async throws -> ResponseBody
    ) async throws -> ResponseBody {
        // The usual case, no identical call in flight, leads at once, without a continuation to wait on.
        let leadsAtOnce = state.withLock { state -> Bool in
            guard state.calls[key] == nil, state.cancelledFollowers.isEmpty || !state.cancelledFollowers.contains(id)
            else { return false }
            state.lead(key, by: id)
            return true
        }
        if leadsAtOnce { return try await runShared(key, by: id, operation) }
        return try await follow(key, by: id, call: call, orLead: operation)
    }

    /// Waits, as the request `id`, for the result of the identical request's call with `key`; when that call
    /// ended before `id` joined it, or its leader ended before running it, `id` runs it (`operation`) for the others. A follower that is
    /// cancelled (through `call`) leaves on its own.
    @inline(never)  // its continuation's metadata would cost every caller's frame a task allocation at entry
    nonisolated(nonsending) func follow(
        _ key: CoalescingKey,
        by id: RequestID,
        call: Call,
        orLead operation: nonisolated(nonsending) () async throws -> ResponseBody
    ) async throws -> ResponseBody {
        let shared: ResponseBody? = try await call.whileWaiting(
            on: FollowerWait(pool: self, key: key, id: id)
        ) {
            try await withCheckedThrowingContinuation { (continuation: SharedCall.Follower) in
                enum Role {
                    case leads
                    case follows(PooledRequest?)
                    case cancelled
                }
                let role = state.withLock { state -> Role in
                    if state.cancelledFollowers.remove(id) != nil { return .cancelled }
                    guard state.calls[key] != nil else {
                        state.lead(key, by: id)
                        return .leads
                    }
                    state.calls[key]?.followers[id] = continuation
                    return .follows(state.markRunning(id, coalesced: true))
                }
                switch role {
                case .leads: continuation.resume(returning: nil)
                case .follows(let started): if let started { reportStarted(started) }
                case .cancelled: continuation.resume(throwing: CourierError.cancelled())
                }
            }
        }
        if let shared { return shared }
        return try await runShared(key, by: id, operation)
    }

    /// Runs `operation`, the call with `key` that the request `id` leads, and hands its result to the requests
    /// that joined it. When `id`'s caller has gone meanwhile, the result went to them alone: `id` hears
    /// ``CourierError/Code/cancelled``.
    nonisolated(nonsending) func runShared(
        _ key: CoalescingKey,
        by id: RequestID,
        _ operation: nonisolated(nonsending) () async throws -> ResponseBody
    ) async throws -> ResponseBody {
        let result: Result<ResponseBody, any Error>
        do { result = .success(try await operation()) } catch { result = .failure(error) }
        let (followers, callerLeft) = state.withLock { $0.closeSharedCall(key, ledBy: id) }
        for follower in followers { follower.resume(with: result.map { $0 }) }
        if callerLeft { throw CourierError.cancelled() }  // the result went to the followers; nobody waits for the rest
        return try result.get()
    }

    /// The first attempt of `id`, which led a shared call and ran it (``FirstCall/leads(_:)``), is over with
    /// `result` and the call goes on (a wait, a refresh, another attempt): gives its slot back and hands the result
    /// to the requests that joined it, in one lock round trip. When `id`'s caller has gone meanwhile, its call is
    /// cancelled: the result went to the others, and nobody waits for the rest.
    nonisolated func releaseSlot(
        _ id: RequestID,
        handingOver result: Result<ResponseBody, any Error>,
        call: Call
    ) {
        let (started, followers, callerLeft) = state.withLock { state in
            let started = state.releaseSlot(id)
            let (followers, callerLeft) = state.closeSharedCall(ledBy: id)
            return (started, followers, callerLeft)
        }
        Self.wake(started)
        for follower in followers { follower.resume(with: result.map { $0 }) }
        if callerLeft { call.cancel() }
    }

    /// A follower was cancelled: it stops waiting. When it was the last one and the leader's caller has gone too,
    /// the call itself is cancelled.
    fileprivate nonisolated func leaveSharedCall(_ key: CoalescingKey, follower id: RequestID) {
        let (continuation, leader) = state.withLock { state -> (SharedCall.Follower?, Call?) in
            guard let continuation = state.calls[key]?.followers.removeValue(forKey: id) else {
                if state.calls[key]?.leader != id { state.cancelledFollowers.insert(id) }  // not arrived yet
                return (nil, nil)
            }
            guard let call = state.calls[key], call.followers.isEmpty, let leader = state.entries[call.leader],
                leader.callerLeft
            else {
                return (continuation, nil)
            }
            return (continuation, leader.call)
        }
        continuation?.resume(throwing: CourierError.cancelled())
        leader?.cancel()
    }
}

/// A follower's wait for a shared call, as its ``Call`` sees it.
private final class FollowerWait: RequestCancellable {
    let pool: RequestPool
    let key: CoalescingKey
    let id: RequestID

    init(pool: RequestPool, key: CoalescingKey, id: RequestID) {
        self.pool = pool
        self.key = key
        self.id = id
    }

    func cancel() { pool.leaveSharedCall(key, follower: id) }
}
