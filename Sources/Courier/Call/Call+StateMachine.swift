import HTTPTypes

/// The decisions of one call, from its first attempt to its end, for every kind of call: a send, a stream, an
/// upload, each exchange of a download, and the retries of a download's segment and of a resumable upload, whose
/// attempts continue from where the last one got to. It takes what happened (a redirect arrived, an answer
/// arrived, the exchange failed, the body ended or broke, the call made progress, the wait is over, the
/// credential was refreshed, the retry rule answered) and says what to do next; ``RequestExecutor``'s driver does it for a request, the
/// download's transfer and the resumable upload for theirs. It calls nobody: no I/O, no clock of its own (events carry the time), and not the retry rule
/// either, whose answer (which may take a budget's lock and a random number) the driver asks for when the machine
/// says so and feeds back as an event. Its tests feed it events one by one, in the style of AsyncHTTPClient's
/// `Transaction+StateMachine`.
///
/// It also keeps the call's part in the pool: queued until its first attempt, which plays the role the pool gave it
/// as it registered (a call of its own, leading a call identical requests share, or following one); as an attempt
/// ends without delivering, the machine says what it gives back (``attemptLeft()``).
///
/// A call that turns on no optional step runs the same machine with nothing to decide: its first answer is
/// delivered, its first failure is its end, unless the pooled connection it met was stale.
struct CallStateMachine {
    /// What the driver does next.
    enum Action {
        /// Make an attempt: the first as the pool admitted it, a later one on a slot of its own.
        case exchange
        /// Make the attempt again at once, without counting it: it met a kept-alive connection the server had
        /// already closed, so it never reached the server.
        case resend
        /// Ask the retry rule whether to try again after `error` (a failure, or an error status as
        /// ``CourierError/Code/httpStatus``), then report its answer with ``CallStateMachine/ruleAnswered(_:now:)``.
        case askRetryRule(CourierError)
        /// Wait this long, then report ``CallStateMachine/slept()``: the retry rule asked for another attempt.
        case wait(Duration)
        /// Refresh the credential the refused attempt carried (``CredentialStore/refresh(after:call:)``), then report
        /// ``CallStateMachine/refreshed()`` or ``CallStateMachine/refreshFailed(_:)``.
        case refresh(generation: Int)
        /// The answer is final: leave the pool, then validate and decode it, or read its body (a driver that
        /// reports the body phase says how it ended with ``CallStateMachine/bodyEnded()`` or
        /// ``CallStateMachine/bodyFailed(_:)``).
        case deliver
        /// The body was read to its end: the call is over.
        case done
        /// The call ends with this error.
        case fail(CourierError)
    }

    /// What the driver does with the slot and the shared call of an attempt that ended without delivering
    /// (``CallStateMachine/attemptLeft()``).
    enum Leaving: Equatable {
        /// Nothing: it followed another request's call, held no slot, or already gave it back.
        case nothing
        /// Give the slot back: the next attempt asks for one of its own.
        case releaseSlot
        /// Give the slot back and hand the attempt's outcome to the identical requests that share the call it led.
        case handOver
    }

    private enum State {
        /// In the pool, before its first attempt: waiting for a slot, or for the call it follows.
        case queued
        case exchanging, waiting, refreshing, finished
        /// The answer was delivered and its body is being read.
        case delivered
        /// The retry rule is asked about an error status (`delivers`: its answer is delivered when the rule says
        /// no) or a failure (the call fails with it).
        case askingRule(CourierError, delivers: Bool)
    }

    /// How many times one call may refresh its credential before a refusal of the fresh one is final: enough for
    /// a credential that expired twice during a long call, never a loop against a server that refuses them all.
    static let refreshLimit = 2

    private var state = State.queued
    /// The call's part in the pool for the attempt under way, as the pool decided it at registration: its own
    /// call, leading a call identical requests share, or following one. Only the first attempt has one; a later
    /// attempt asks for its own slot (and shares by its key, if any). `nil` for a call outside the pool.
    private(set) var role: FirstCall?
    /// The attempt under way, 1 for the first; a resend on a fresh connection is not another.
    private(set) var attempt = 0
    /// The last attempt before the call's latest progress (see ``progressed()``).
    private var attemptBeforeProgress = 0
    /// The attempts since the call last made progress, the one under way included: what the retry rule is asked
    /// with, so a download or an upload that keeps moving is never stopped by failures it already got past. For a
    /// call that reports no progress, ``attempt``.
    var attemptsInARow: Int { attempt - attemptBeforeProgress }
    /// The refreshes this call asked for.
    private(set) var refreshes = 0
    private var resentStale = false
    /// The resends of requests the server said it did not process (``CourierError/isUnprocessed``).
    private var unprocessedResends = 0
    /// The most such resends of one call: each needs a connection on which the server processed other streams, and
    /// a server that refuses every stream must still end the call.
    static let maxUnprocessedResends = 10
    /// The redirects followed in the attempt under way: made at its first 3xx (an answer that is not one decides
    /// nothing), dropped when the next attempt or a resend starts again from the call's request.
    private var redirects: RedirectState?
    private let request: PreparedRequest
    /// Whether the call has a retry rule to ask.
    private let hasRetryRule: Bool
    private let deadline: Tick

    /// A machine for `request`, whose failures and error statuses are offered to a retry rule when `hasRetryRule`,
    /// for another attempt that can start before `deadline`.
    init(_ request: PreparedRequest, hasRetryRule: Bool, deadline: Tick) {
        self.request = request
        self.hasRetryRule = hasRetryRule
        self.deadline = deadline
    }

    /// A machine for a call whose attempts go on from where the last one got to (a download's segment, a resumable
    /// upload): it has a retry rule, which counts failures in a row, and no deadline, since such a call may run for
    /// hours and each of its exchanges has timeouts of its own.
    init(continuing request: PreparedRequest) {
        self.init(request, hasRetryRule: true, deadline: .distantFuture)
    }

    /// The call starts, in `role` when the pool tracks it.
    mutating func start(as role: FirstCall? = nil) -> Action {
        guard case .queued = state else { return invalid("start") }
        self.role = role
        state = .exchanging
        attempt = 1
        return .exchange
    }

    /// An answer of 3xx to `sent` (the attempt's request, or the hop before) arrived during the attempt: whether to
    /// follow it, and how, under `policy` (as the attempt's first 3xx found it), or to take it as the attempt's answer (then report it with
    /// ``answered(_:retryAfter:refusedGeneration:)``). A redirect that cannot be followed (a loop, one hop too many,
    /// a location that is not an http(s) URL) is thrown: the attempt's failure, to report with ``failed(_:)``.
    /// Credentials are to be stripped from a hop that leaves the origin; the next attempt starts again from the
    /// call's request, with no hop counted.
    mutating func redirected(
        _ sent: PreparedRequest,
        status: HTTPResponse.Status,
        location: @autoclosure () -> String?,
        under policy: RedirectPolicy
    ) throws -> RedirectAction {
        guard case .exchanging = state else {
            assertionFailure("redirected in state \(state)")
            throw CourierError(code: .invalidState, message: "the call's driver reported a redirect in state \(state)")
        }
        var following = redirects ?? RedirectState(policy: policy, initial: request.method, url: request.url)
        defer { redirects = following }
        return try following.next(
            method: sent.method,
            url: sent.url,
            status: status,
            location: location(),
            bodyIsReplayable: sent.body.isReplayable
        )
    }

    /// The attempt's final answer arrived (redirects followed). `refusedGeneration` is the generation of the
    /// credential the attempt carried when the authenticator says the answer refuses it, else `nil`.
    mutating func answered(_ status: HTTPResponse.Status, retryAfter: String?, refusedGeneration: Int?) -> Action {
        guard case .exchanging = state else { return invalid("answered") }
        if let refusedGeneration {
            return refused(refusedGeneration, status: status)
        }
        if status.code >= 400, hasRetryRule {
            var error = CourierError.httpStatus(status, bodyPreview: nil)
            error.retryAfterValue = retryAfter
            return ask(error, delivers: true)
        }
        state = .delivered
        return .deliver
    }

    /// The driver judged the attempt's answer itself and reads its body: a download's range answer (see
    /// ``RangeAnswer``) says where the bytes go, and which statuses are failures, which it reports with
    /// ``failed(_:)``.
    mutating func reading() -> Action {
        guard case .exchanging = state else { return invalid("reading") }
        state = .delivered
        return .deliver
    }

    /// The attempt under way moved the call on (a download wrote bytes it keeps, the server confirmed more of an
    /// upload): the failures before it no longer count against the next ones.
    mutating func progressed() {
        attemptBeforeProgress = attempt - 1
    }

    /// The attempt under way ended without delivering (a failure, or an answer that is not final): what to give
    /// back before the machine's next step. Its role ends with it.
    mutating func attemptLeft() -> Leaving {
        defer { role = nil }
        switch role {
        case .own?: return .releaseSlot
        case .leads?: return .handOver
        case .follows?, nil: return .nothing
        }
    }

    /// The delivered answer's body was read to its end.
    mutating func bodyEnded() -> Action {
        guard case .delivered = state else { return invalid("bodyEnded") }
        state = .finished
        return .done
    }

    /// Reading the delivered answer's body failed; the driver can make another attempt for the rest, so the retry
    /// rule is asked, as for a failure before the answer (a resend does not apply: the server was reached).
    mutating func bodyFailed(_ error: CourierError) -> Action {
        guard case .delivered = state else { return invalid("bodyFailed") }
        if error.code == .cancelled || !hasRetryRule { return fail(error) }
        return ask(error, delivers: false)
    }

    /// The attempt failed before a final answer.
    mutating func failed(_ error: CourierError) -> Action {
        guard case .exchanging = state else { return invalid("failed") }
        if error.code == .cancelled { return fail(error) }
        if error.isUnprocessed, unprocessedResends < Self.maxUnprocessedResends, request.body.isReplayable {
            unprocessedResends += 1
            redirects = nil
            return .resend  // not processed: safe whatever the method (RFC 9113 §8.7)
        }
        if error.isStaleConnection, !resentStale, request.isIdempotent, request.body.isReplayable {
            resentStale = true
            redirects = nil
            return .resend  // as any attempt that does not deliver, it leaves its role (attemptLeft)
        }
        return hasRetryRule ? ask(error, delivers: false) : fail(error)
    }

    /// The retry rule answered what ``Action/askRetryRule(_:)`` asked, at `now`: another attempt after its delay
    /// when it asks for one that can start before the deadline, else the answer is delivered or the call fails.
    mutating func ruleAnswered(_ answer: RetryResult, now: Tick) -> Action {
        guard case .askingRule(let error, let delivers) = state else { return invalid("ruleAnswered") }
        if case .retry(let delay) = answer, now + delay < deadline {
            state = .waiting
            return .wait(delay)
        }
        guard delivers else { return fail(error) }
        state = .delivered
        return .deliver
    }

    /// The wait the machine asked for is over.
    mutating func slept() -> Action {
        guard case .waiting = state else { return invalid("slept") }
        return nextAttempt()
    }

    /// The credential was refreshed (by this call or another refused with the same one).
    mutating func refreshed() -> Action {
        guard case .refreshing = state else { return invalid("refreshed") }
        return nextAttempt()
    }

    /// The refresh threw: the call fails with ``CourierError/Code/authenticationFailed`` carrying its error.
    mutating func refreshFailed(_ error: any Error) -> Action {
        guard case .refreshing = state else { return invalid("refreshFailed") }
        if let error = error as? CourierError, error.code == .cancelled { return fail(error) }
        return fail(
            CourierError(
                code: .authenticationFailed,
                message: "refreshing the credential failed: \(error)",
                underlying: error
            )
        )
    }

    /// The call was cancelled while it waited or refreshed.
    mutating func cancelled() -> Action {
        if case .finished = state { return invalid("cancelled") }
        return fail(.cancelled())
    }

    private mutating func refused(_ generation: Int, status: HTTPResponse.Status) -> Action {
        guard request.body.isReplayable else {
            return fail(
                CourierError(
                    code: .authenticationFailed,
                    message:
                        "the server refused the credential (HTTP \(status.code)) and the body is a stream that cannot be sent again "
                        + "with a fresh one; send it as data or a file"
                )
            )
        }
        guard refreshes < Self.refreshLimit else {
            return fail(
                CourierError(
                    code: .authenticationFailed,
                    message:
                        "the server refused \(refreshes + 1) credentials in a row (HTTP \(status.code)), fresh ones included"
                )
            )
        }
        refreshes += 1
        state = .refreshing
        return .refresh(generation: generation)
    }

    private mutating func ask(_ error: CourierError, delivers: Bool) -> Action {
        state = .askingRule(error, delivers: delivers)
        return .askRetryRule(error)
    }

    private mutating func nextAttempt() -> Action {
        state = .exchanging
        redirects = nil
        attempt += 1
        return .exchange
    }

    private mutating func fail(_ error: CourierError) -> Action {
        state = .finished
        return .fail(error)
    }

    /// An event the state does not expect is the driver's bug; the call ends with a typed error rather than a trap.
    private mutating func invalid(_ event: String) -> Action {
        assertionFailure("\(event) in state \(state)")
        return fail(CourierError(code: .invalidState, message: "the call's driver reported \(event) in state \(state)"))
    }
}

extension CallStateMachine {
    /// `action` as it is, unless it asks the retry rule: then the machine's next action once `rule` answered, asked
    /// about `request` with the attempts in a row. The drivers' one way to ask the rule (the machine never calls it).
    mutating func asking(_ rule: (any RequestRetrier)?, about request: PreparedRequest, _ action: Action) -> Action {
        guard case .askRetryRule(let error) = action, let rule else { return action }
        return ruleAnswered(rule.retry(request, failedWith: error, attempt: attemptsInARow), now: .now)
    }
}
