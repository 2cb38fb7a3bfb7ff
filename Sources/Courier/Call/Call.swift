import NIOCore
import NIOHTTP1
import Synchronization

/// Something a call is waiting on that can be stopped from outside its task: AsyncHTTPClient's task, the wait for
/// a slot, a retry's sleep.
protocol RequestCancellable: AnyObject, Sendable {
    /// Stops it; whoever waits on it hears an error soon after. Called at most once per installation.
    func cancel()
}

/// One call, from the moment it is prepared to its final answer, in the style of AsyncHTTPClient's
/// `Transaction`: what it is (the request as written and as prepared, its timeouts, deadline, limits, cookie
/// handling and debug log), and, behind its one lock, what it waits on at this moment, whether it is suspended,
/// and the answer an event loop hands to it.
///
/// Every step of the call's road reads what it needs from the call, so none takes its context as parameters.
///
/// - The **cancel slot**: what the call waits on at this moment installs itself here, and the caller's
///   cancellation, the pool's controls and the deadline all cancel through it. A call runs in its caller's own
///   task, not in one the pool could cancel, so this is how the pool reaches it. Once cancelled it stays
///   cancelled: whatever is installed later is cancelled at once, so a cancellation that arrives between two
///   waits stops the next one.
/// - The **suspension** (``RequestPool/suspend(_:)``): while suspended, the transport reading the answer stops
///   asking for more (``notSuspended(on:)``, ``waitWhileSuspended()``) until a resume or a cancel.
/// - The **hand-off** of an answer read whole on an event loop (``awaitAnswer(installing:starting:)``), see below.
final class Call: Sendable {
    /// The request as its caller wrote it.
    let request: ErasedRequest
    /// The request as prepared: its URL resolved, its headers and body encoded.
    let prepared: PreparedRequest
    /// When the call started: its timing and its total timeout count from here.
    let start: Tick
    /// When the pool cancels the call: the prepared request's deadline, `start` plus the total timeout.
    let deadline: Tick
    /// The session's timeouts with the request's own applied, as the prepared request carries them.
    var timeouts: Timeouts { prepared.timeouts }
    /// The bounds on each answer's body.
    let limits: ResponseLimits
    /// Whether the call sends and stores cookies.
    let cookies: CookieHandling
    /// The session's debug log with this call's id; nil while debug logging is off.
    let log: DebugLog?
    /// Who hears of the call's steps: the session's monitors, then the request's own.
    let monitors: [any EventMonitor]

    fileprivate enum Wait {
        case idle
        case waitingOn(any RequestCancellable)
        case cancelled
    }

    fileprivate struct State {
        var wait = Wait.idle
        /// What to call when the suspension ends; `nil` while the call is not suspended.
        var resumers: [@Sendable () -> Void]?
        /// The caller, while it waits for an answer read whole.
        var waiter: UnsafeContinuation<Void, Never>?
        /// The redirects followed so far, kept while the session has monitors.
        var redirects: [RedirectHop] = []
    }

    private let state = Locked(State())
    /// The answer an exchange ended with. The loop writes it once, before it publishes it through
    /// `answerIsHandedOver`; the caller reads it once, after it has seen the flag, and then takes the flag back.
    /// One exchange at a time uses it, and each exchange ends exactly once (``finish(_:of:)``), so no two threads
    /// touch it at the same time.
    private nonisolated(unsafe) var handedOver: Result<ResponseBody, any Error>?
    /// Set (releasing) by the loop once `handedOver` is written, taken back (acquiring) by the caller before it
    /// reads it: the edge between the two that ThreadSanitizer can see, where the continuation's is the runtime's.
    private let answerIsHandedOver = Atomic<Bool>(false)
    /// Whether the call is suspended, readable without the lock: the transport asks at every part of a body.
    private let suspended = Atomic<Bool>(false)

    init(
        _ request: ErasedRequest,
        prepared: PreparedRequest,
        start: Tick,
        limits: ResponseLimits,
        cookies: CookieHandling,
        log: DebugLog?,
        monitors: [any EventMonitor] = []
    ) {
        self.request = request
        self.prepared = prepared
        self.start = start
        deadline = prepared.deadlineTick
        self.limits = limits
        self.cookies = cookies
        self.log = log
        self.monitors = monitors
    }

    /// Notes a redirect the call followed, for the monitors (``DebugMessage/redirects``).
    func followed(_ hop: RedirectHop) { state.withLock { $0.redirects.append(hop) } }

    /// The redirects followed so far.
    var redirects: [RedirectHop] { state.withLock { $0.redirects } }

    /// The request the call sent last when it ended on `attempt`: the one after that attempt's last redirect, when
    /// the monitors' record has it, else the prepared request.
    func lastSent(onAttempt attempt: Int) -> PreparedRequest {
        guard let hop = redirects.last, hop.attempt == attempt, let next = hop.next else { return prepared }
        return next
    }

    // MARK: The cancel slot

    /// Whether ``cancel()`` has been called.
    var isCancelled: Bool {
        state.withLock { if case .cancelled = $0.wait { true } else { false } }
    }

    /// Makes `cancellable` what a cancel stops; when the call was cancelled already, cancels it at once.
    func install(_ cancellable: any RequestCancellable) {
        let cancelledAlready = state.withLock { state in
            if case .cancelled = state.wait { return true }
            state.wait = .waitingOn(cancellable)
            return false
        }
        if cancelledAlready { cancellable.cancel() }
    }

    /// The wait `cancellable` ended; a later cancel does not reach it.
    func remove(_ cancellable: any RequestCancellable) {
        state.withLock { $0.stopWaiting(on: cancellable) }
    }

    /// Cancels what the call waits on now, and everything it would wait on later; ends a suspension.
    func cancel() {
        let (current, resumers) = state.withLock { state -> ((any RequestCancellable)?, [@Sendable () -> Void]?) in
            defer {
                state.wait = .cancelled
                state.resumers = nil
                suspended.store(false, ordering: .releasing)
            }
            if case .waitingOn(let current) = state.wait { return (current, state.resumers) }
            return (nil, state.resumers)
        }
        for resume in resumers ?? [] { resume() }
        current?.cancel()
    }

    /// Runs `operation`, a wait that `cancellable` ends, with `cancellable` installed.
    nonisolated(nonsending) func whileWaiting<T>(
        on cancellable: any RequestCancellable,
        _ operation: nonisolated(nonsending) () async throws -> T
    ) async throws -> T {
        install(cancellable)
        defer { remove(cancellable) }
        return try await operation()
    }

    // MARK: Suspending

    /// Whether the call is suspended.
    var isSuspended: Bool { suspended.load(ordering: .acquiring) }

    /// Holds the reading of the call's answer until ``resume()``; does nothing once cancelled.
    func suspend() {
        state.withLock { state in
            if case .cancelled = state.wait { return }
            guard state.resumers == nil else { return }
            state.resumers = []
            suspended.store(true, ordering: .releasing)
        }
    }

    /// Lets the reading go on.
    func resume() {
        let resumers = state.withLock { state in
            defer {
                state.resumers = nil
                suspended.store(false, ordering: .releasing)
            }
            return state.resumers
        }
        for resume in resumers ?? [] { resume() }
    }

    /// A future that succeeds once the call is not suspended: at once, nearly always. What an AsyncHTTPClient
    /// delegate returns for a part of the answer, so a suspended call's connection stops reading (TCP
    /// backpressure, nothing buffered) until it is resumed or cancelled.
    func notSuspended(on loop: any EventLoop) -> EventLoopFuture<Void> {
        guard isSuspended else { return loop.makeSucceededVoidFuture() }
        let promise = loop.makePromise(of: Void.self)
        if !whenResumed({ promise.succeed() }) { promise.succeed() }
        return promise.futureResult
    }

    /// Returns once the call is not suspended (or is cancelled): the same hold for a transport read in a task.
    func waitWhileSuspended() async {
        guard isSuspended else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !whenResumed({ continuation.resume() }) { continuation.resume() }
        }
    }

    /// Keeps `resumer` for the end of the suspension; `false` (and nothing kept) when the call is not suspended.
    private func whenResumed(_ resumer: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard state.resumers != nil else { return false }
            state.resumers?.append(resumer)
            return true
        }
    }

    // MARK: Handing an answer read whole over

    // An event loop hands a response read whole to the call's task when the exchange ends, head and body together.
    // Waking the task at the head as well, as AsyncHTTPClient's async API does, cost two lock round trips more (the
    // head stored, then the answer or the place to wait for it taken) and showed no gain in CPU or throughput (see
    // TheRequestPath).
    //
    // The continuation is unchecked (a checked one allocates a canary and swaps it atomically on resume): it is
    // stored under the lock and taken out of it by the one call that resumes it, so it can be neither resumed twice
    // nor dropped while the exchange runs. What the loop hands over does not go through the continuation, which only
    // wakes the task: a continuation resumed before its task has suspended on it is taken up by the concurrency
    // runtime with an atomic that ThreadSanitizer cannot see, so a value passed through it looked like a race with
    // the loop that made it. It goes through a field published with a releasing store and taken with an acquiring
    // exchange, an edge ThreadSanitizer sees at the cost of one atomic, where taking it under the lock cost a lock
    // round trip. One exchange at a time uses it.

    /// Starts the exchange (`start`) and returns its answer, head and body. The task sleeps until the exchange
    /// ends, then takes the answer without the lock: for a body read whole, waking the caller at the head would only
    /// wake it early, to wait again or to take what the loop had read in the meantime, at a lock round trip more
    /// (see TheRequestPath).
    ///
    /// `cancellable`, what stands for the exchange in the cancel slot when the exchange cannot install itself
    /// without another round trip, goes in with the wait.
    nonisolated(nonsending) func awaitAnswer(
        installing cancellable: (any RequestCancellable)? = nil,
        starting start: () -> Void
    ) async -> Result<ResponseBody, any Error> {
        await withUnsafeContinuation { continuation in
            let cancelledAlready = state.withLock { state in
                state.waiter = continuation
                guard let cancellable else { return false }
                if case .cancelled = state.wait { return true }
                state.wait = .waitingOn(cancellable)
                return false
            }
            if cancelledAlready { cancellable?.cancel() }
            start()
        }
        guard answerIsHandedOver.exchange(false, ordering: .acquiring), let ended = handedOver.take() else {
            return .failure(CourierError(code: .invalidState, message: "an exchange ended without an answer"))
        }
        return ended
    }

    /// The exchange ended with `answer` (called once per exchange, on the loop); `task`, what cancelled it, is no
    /// longer waited on.
    func finish(_ answer: Result<ResponseBody, any Error>, of task: any RequestCancellable) {
        handedOver = answer
        answerIsHandedOver.store(true, ordering: .releasing)
        state.withLock { state in
            state.stopWaiting(on: task)
            return state.waiter.take()
        }?.resume()
    }
}

extension Call.State {
    /// Empties the cancel slot when `cancellable` is what it holds.
    fileprivate mutating func stopWaiting(on cancellable: any RequestCancellable) {
        if case .waitingOn(let current) = wait, current === cancellable { wait = .idle }
    }
}
