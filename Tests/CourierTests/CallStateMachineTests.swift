import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import Courier

/// The call pipeline's decisions, event by event, without I/O: the machine every kind of call runs.
@Suite("Call state machine")
struct CallStateMachineTests {
    let get = PreparedRequest(method: .get, url: URL(string: "https://h.example.com/x")!)
    let post = PreparedRequest(method: .post, url: URL(string: "https://h.example.com/x")!)
    let now = Tick.now
    var deadline: Tick { now + .seconds(30) }

    var stale: CourierError {
        var error = CourierError(code: .connectionClosed, message: "closed")
        error.isStaleConnection = true
        return error
    }

    @Test func withNothingToDecideTheFirstAnswerIsDelivered() {
        var machine = CallStateMachine(get, hasRetryRule: false, deadline: deadline)
        #expect(machine.start().is(.exchange))
        #expect(machine.answered(.serviceUnavailable, retryAfter: nil, refusedGeneration: nil).is(.deliver))
        #expect(machine.attempt == 1)
    }

    @Test func withNothingToDecideTheFirstFailureEndsTheCall() {
        var machine = CallStateMachine(get, hasRetryRule: false, deadline: deadline)
        _ = machine.start()
        let reset = CourierError(code: .connectionReset, message: "reset")
        #expect(machine.failed(reset).failure?.code == .connectionReset)
    }

    /// Each 3xx is an event: the machine says which request goes next, with credentials stripped when the hop
    /// leaves the origin, or that the answer stands.
    @Test func redirectsAreEventsTheMachineAnswersWithTheNextHop() throws {
        var machine = CallStateMachine(post, hasRetryRule: false, deadline: deadline)
        _ = machine.start()
        let policy = RedirectPolicy()
        let first = try machine.redirected(post, status: .seeOther, location: "/y", under: policy)
        let here = URL(string: "https://h.example.com/y")!
        #expect(first == .follow(method: .get, url: here, dropsBody: true, stripsCredentials: false))
        var hop = post
        (hop.method, hop.url) = (.get, here)
        let there = URL(string: "https://other.example.com/z")!
        let second = try machine.redirected(
            hop,
            status: .temporaryRedirect,
            location: there.absoluteString,
            under: policy
        )
        #expect(second == .follow(method: .get, url: there, dropsBody: false, stripsCredentials: true))
        #expect(try machine.redirected(hop, status: .notModified, location: "/w", under: policy) == .deliver)
        #expect(try machine.redirected(hop, status: .found, location: nil, under: policy) == .deliver)
        #expect(machine.answered(.ok, retryAfter: nil, refusedGeneration: nil).is(.deliver))

        var unfollowed = CallStateMachine(get, hasRetryRule: false, deadline: deadline)
        _ = unfollowed.start()
        #expect(try unfollowed.redirected(get, status: .found, location: "/n", under: .none) == .deliver)
    }

    /// A redirect that cannot be followed is the attempt's failure, offered to the rule like any other; the next
    /// attempt starts again from the call's request, its hops not counted against it.
    @Test func aRetryStartsItsRedirectsAgainFromTheCallsRequest() throws {
        var machine = CallStateMachine(get, hasRetryRule: true, deadline: deadline)
        _ = machine.start()
        let policy = RedirectPolicy(maxHops: 1)
        #expect(try machine.redirected(get, status: .found, location: "/one", under: policy) != .deliver)
        var hop = get
        hop.url = URL(string: "https://h.example.com/one")!
        let tooMany = #expect(throws: CourierError.self) {
            try machine.redirected(hop, status: .found, location: "/two", under: policy)
        }
        #expect(tooMany?.code == .tooManyRedirects)
        #expect(machine.failed(try #require(tooMany)).askedAbout?.code == .tooManyRedirects)
        #expect(machine.ruleAnswered(.retry(after: .zero), now: now).delay == .zero)
        #expect(machine.slept().is(.exchange))
        // the same first hop again: neither a loop nor one too many
        #expect(try machine.redirected(get, status: .found, location: "/one", under: policy) != .deliver)
        let loop = #expect(throws: CourierError.self) {
            try machine.redirected(hop, status: .found, location: "/x", under: RedirectPolicy())
        }
        #expect(loop?.code == .redirectLoop, "the visited requests are the attempt's")
    }

    /// The pool's decision at registration is the first attempt's role: as the attempt ends without delivering,
    /// the machine says what it gives back (the slot, and a led call's outcome to the requests sharing it); a
    /// later attempt has no role and asks for a slot of its own.
    @Test func theFirstAttemptPlaysThePoolsRoleAndTheNextOnesAskForTheirOwnSlot() {
        var leader = CallStateMachine(get, hasRetryRule: true, deadline: deadline)
        #expect(leader.start(as: .leads).is(.exchange))
        #expect(leader.role == .leads)
        #expect(leader.failed(CourierError(code: .timeout, message: "t")).askedAbout != nil)
        #expect(leader.ruleAnswered(.retry(after: .zero), now: now).delay == .zero)
        #expect(leader.attemptLeft() == .handOver, "the followers hear the failure as the slot goes back")
        #expect(leader.role == nil)
        #expect(leader.slept().is(.exchange))
        #expect(leader.attemptLeft() == .nothing, "the second attempt took its slot through the pool itself")

        var own = CallStateMachine(get, hasRetryRule: false, deadline: deadline)
        _ = own.start(as: .own)
        #expect(own.failed(stale).is(.resend))
        #expect(own.attemptLeft() == .releaseSlot, "a resend asks for a slot again")

        var follower = CallStateMachine(get, hasRetryRule: false, deadline: deadline)
        _ = follower.start(as: .follows)
        #expect(follower.answered(.ok, retryAfter: nil, refusedGeneration: nil).is(.deliver))
        #expect(follower.attemptLeft() == .nothing, "a follower holds no slot")
        #expect(CallStateMachine(get, hasRetryRule: false, deadline: deadline).role == nil, "queued, no role yet")
    }

    @Test func aStaleConnectionIsResentOnceAtOnceWithoutARule() {
        var machine = CallStateMachine(get, hasRetryRule: false, deadline: deadline)
        _ = machine.start()
        #expect(machine.failed(stale).is(.resend))
        #expect(machine.attempt == 1, "a resend is not another attempt")
        #expect(machine.failed(stale).failure?.code == .connectionClosed, "only once")
    }

    /// A request the server said it did not process (a stream above a GOAWAY's last one) goes again whatever its
    /// method, without a rule, up to the machine's bound; one whose body cannot be sent again does not.
    @Test func anUnprocessedRequestIsResentWhateverItsMethodUpToTheBound() {
        var unprocessed = CourierError(code: .connectionClosed, message: "GOAWAY")
        unprocessed.isUnprocessed = true
        var machine = CallStateMachine(post, hasRetryRule: false, deadline: deadline)
        _ = machine.start()
        for _ in 0..<CallStateMachine.maxUnprocessedResends {
            #expect(machine.failed(unprocessed).is(.resend))
            _ = machine.attemptLeft()
        }
        #expect(machine.attempt == 1, "a resend is not another attempt")
        #expect(machine.failed(unprocessed).failure?.isUnprocessed == true, "a server refusing every stream ends it")

        var streamed = post
        streamed.body = .stream(ByteStream(chunks: [ByteBuffer(string: "x")]), length: 1)
        var once = CallStateMachine(streamed, hasRetryRule: false, deadline: deadline)
        _ = once.start()
        #expect(once.failed(unprocessed).failure != nil)
    }

    @Test func aStaleConnectionIsNotResentForAnUnsafeMethodOrAStreamedBody() {
        var unsafe = CallStateMachine(post, hasRetryRule: false, deadline: deadline)
        _ = unsafe.start()
        #expect(unsafe.failed(stale).failure != nil)

        var streamed = get
        streamed.body = .stream(ByteStream(chunks: [ByteBuffer(string: "x")]), length: 1)
        var machine = CallStateMachine(streamed, hasRetryRule: false, deadline: deadline)
        _ = machine.start()
        #expect(machine.failed(stale).failure != nil)
    }

    /// The machine asks the rule and takes its answer as an event: it calls nobody.
    @Test func theRulesAnswerIsAnEventThatRetriesAFailureAndARetryableStatusThenStops() {
        var machine = CallStateMachine(get, hasRetryRule: true, deadline: deadline)
        _ = machine.start()
        let timeout = CourierError(code: .timeout, message: "t")
        #expect(machine.failed(timeout).askedAbout?.code == .timeout)
        #expect(machine.ruleAnswered(.retry(after: .milliseconds(10)), now: now).delay == .milliseconds(10))
        #expect(machine.slept().is(.exchange))
        #expect(machine.attempt == 2)
        let asked = machine.answered(.serviceUnavailable, retryAfter: "0", refusedGeneration: nil).askedAbout
        #expect(asked?.status == .serviceUnavailable && asked?.retryAfter == "0", "the status, with its Retry-After")
        #expect(machine.ruleAnswered(.retry(after: .zero), now: now).delay == .zero)
        #expect(machine.slept().is(.exchange))
        #expect(machine.answered(.serviceUnavailable, retryAfter: nil, refusedGeneration: nil).askedAbout != nil)
        #expect(
            machine.ruleAnswered(.doNotRetry(reason: "spent"), now: now).is(.deliver),
            "the last attempt's status is delivered, for validation to judge"
        )
        #expect(machine.attempt == 3)
    }

    @Test func aFailureTheRuleDeclinesEndsTheCallWithThatFailure() {
        var machine = CallStateMachine(get, hasRetryRule: true, deadline: deadline)
        _ = machine.start()
        _ = machine.failed(CourierError(code: .connectionReset, message: "reset"))
        #expect(machine.ruleAnswered(.doNotRetry(reason: "no"), now: now).failure?.code == .connectionReset)
    }

    @Test func aSuccessIsNeverOfferedToTheRule() {
        var machine = CallStateMachine(get, hasRetryRule: true, deadline: deadline)
        _ = machine.start()
        #expect(machine.answered(.ok, retryAfter: nil, refusedGeneration: nil).is(.deliver))
    }

    @Test func noRetryStartsThatCannotStartBeforeTheDeadline() {
        var machine = CallStateMachine(get, hasRetryRule: true, deadline: now + .seconds(1))
        _ = machine.start()
        #expect(machine.answered(.serviceUnavailable, retryAfter: "20", refusedGeneration: nil).askedAbout != nil)
        #expect(machine.ruleAnswered(.retry(after: .seconds(20)), now: now).is(.deliver))
    }

    @Test func aCancellationEndsTheCallWithoutAskingTheRule() {
        var machine = CallStateMachine(get, hasRetryRule: true, deadline: deadline)
        _ = machine.start()
        #expect(machine.failed(.cancelled()).failure?.code == .cancelled)

        var waiting = CallStateMachine(get, hasRetryRule: true, deadline: deadline)
        _ = waiting.start()
        _ = waiting.failed(CourierError(code: .timeout, message: "t"))
        _ = waiting.ruleAnswered(.retry(after: .milliseconds(10)), now: now)
        #expect(waiting.cancelled().failure?.code == .cancelled)
    }

    @Test func aRefusalRefreshesTheCredentialItCarriedThenGoesAgain() {
        var machine = CallStateMachine(get, hasRetryRule: false, deadline: deadline)
        _ = machine.start()
        guard
            case .refresh(let generation) = machine.answered(.unauthorized, retryAfter: nil, refusedGeneration: 4)
        else {
            Issue.record("no refresh")
            return
        }
        #expect(generation == 4)
        #expect(machine.refreshed().is(.exchange))
        #expect(machine.answered(.ok, retryAfter: nil, refusedGeneration: nil).is(.deliver))
    }

    @Test func freshCredentialsRefusedAgainAndAgainStopTheCall() {
        var machine = CallStateMachine(get, hasRetryRule: false, deadline: deadline)
        _ = machine.start()
        for generation in 0..<CallStateMachine.refreshLimit {
            #expect(machine.answered(.unauthorized, retryAfter: nil, refusedGeneration: generation).isRefresh)
            _ = machine.refreshed()
        }
        let last = machine.answered(.unauthorized, retryAfter: nil, refusedGeneration: 9)
        #expect(last.failure?.code == .authenticationFailed)
        #expect(machine.refreshes == CallStateMachine.refreshLimit)
    }

    @Test func aRefreshThatThrowsFailsTheCallWithItsCause() {
        struct Expired: Error {}
        var machine = CallStateMachine(get, hasRetryRule: false, deadline: deadline)
        _ = machine.start()
        _ = machine.answered(.unauthorized, retryAfter: nil, refusedGeneration: 0)
        let failure = machine.refreshFailed(Expired()).failure
        #expect(failure?.code == .authenticationFailed)
        #expect(failure?.underlying is Expired)
    }

    @Test func aRefusedStreamedBodySaysItCannotBeSentAgain() {
        var upload = post
        upload.body = .stream(ByteStream(chunks: [ByteBuffer(string: "x")]), length: 1)
        var machine = CallStateMachine(upload, hasRetryRule: false, deadline: deadline)
        _ = machine.start()
        let failure = machine.answered(.unauthorized, retryAfter: nil, refusedGeneration: 0).failure
        #expect(failure?.code == .authenticationFailed)
        #expect(failure?.message.contains("cannot be sent again") == true)
    }

    /// The transport marks what a stale pooled connection gives, so the machine can resend it.
    @Test func theTransportMarksStaleConnections() {
        let url = URL(string: "http://127.0.0.1:1/")!
        for error: any Error in [
            IOError(errnoCode: ECONNRESET, reason: "read"), ChannelError.ioOnClosedChannel,
            HTTPClientError.remoteConnectionClosed,
        ] {
            #expect(
                AsyncHTTPClientTransport.translate(error, timeouts: Timeouts(), url: url, proxy: nil).isStaleConnection,
                "\(error)"
            )
        }
        #expect(
            !AsyncHTTPClientTransport.translate(HTTPClientError.readTimeout, timeouts: Timeouts(), url: url, proxy: nil)
                .isStaleConnection
        )
    }
}

extension CallStateMachine.Action {
    func `is`(_ other: Self) -> Bool {
        switch (self, other) {
        case (.exchange, .exchange), (.resend, .resend), (.deliver, .deliver): true
        default: false
        }
    }

    var failure: CourierError? {
        if case .fail(let error) = self { error } else { nil }
    }

    var delay: Duration? {
        if case .wait(let delay) = self { delay } else { nil }
    }

    /// The error the machine asks the retry rule about.
    var askedAbout: CourierError? {
        if case .askRetryRule(let error) = self { error } else { nil }
    }

    var isRefresh: Bool {
        if case .refresh = self { true } else { false }
    }

    var isDone: Bool {
        if case .done = self { true } else { false }
    }
}

/// The body phase, which a download's segment and a resumable upload report: how the body ended, and progress
/// that starts the count of failures in a row again.
@Suite("Call state machine: the body phase")
struct CallStateMachineBodyTests {
    let get = PreparedRequest(method: .get, url: URL(string: "https://h.example.com/file")!)
    let now = Tick.now
    let cut = CourierError(code: .connectionReset, message: "cut")

    @Test func aBodyReadToItsEndEndsTheCall() {
        var machine = CallStateMachine(get, hasRetryRule: true, deadline: now + .seconds(30))
        _ = machine.start()
        #expect(machine.reading().is(.deliver))
        #expect(machine.bodyEnded().isDone)
    }

    @Test func aBrokenBodyIsOfferedToTheRuleUnlessTheCallHasNoneOrWasCancelled() {
        var machine = CallStateMachine(get, hasRetryRule: true, deadline: now + .seconds(30))
        _ = machine.start()
        _ = machine.answered(.ok, retryAfter: nil, refusedGeneration: nil)
        #expect(machine.bodyFailed(cut).askedAbout?.code == .connectionReset, "no resend: the server was reached")

        var without = CallStateMachine(get, hasRetryRule: false, deadline: now + .seconds(30))
        _ = without.start()
        _ = without.reading()
        #expect(without.bodyFailed(cut).failure?.code == .connectionReset)

        var cancelled = CallStateMachine(get, hasRetryRule: true, deadline: now + .seconds(30))
        _ = cancelled.start()
        _ = cancelled.reading()
        #expect(cancelled.bodyFailed(.cancelled()).failure?.code == .cancelled)
    }

    /// A download's segment, event by event with the download's own rule: failures in a row wait longer each
    /// time; bytes kept start the count again; the rule's limit ends it with the last failure.
    @Test func aDownloadsRetriesGoThroughTheMachine() {
        let rule = DownloadRetryRule(DownloadOptions(retries: 2, retryDelay: .milliseconds(100)))
        var machine = CallStateMachine(continuing: get)
        _ = machine.start()
        // the connection is refused before any answer
        var action = machine.failed(CourierError(code: .connectionFailed, message: "refused"))
        #expect(action.askedAbout?.code == .connectionFailed)
        #expect(
            machine.ruleAnswered(rule.retry(get, failedWith: cut, attempt: machine.attemptsInARow), now: now).delay
                == .milliseconds(100)
        )
        #expect(machine.slept().is(.exchange))
        // the range answer is read; bytes arrive and are kept, then the body breaks
        #expect(machine.reading().is(.deliver))
        machine.progressed()
        action = machine.bodyFailed(cut)
        #expect(machine.attemptsInARow == 1, "the bytes kept start the count again")
        #expect(machine.asking(rule, about: get, action).delay == .milliseconds(100))
        #expect(machine.slept().is(.exchange))
        // two more failures without progress: the second is past the rule's two retries
        _ = machine.reading()
        action = machine.bodyFailed(cut)
        #expect(machine.asking(rule, about: get, action).delay == .milliseconds(200))
        _ = machine.slept()
        action = machine.failed(cut)
        #expect(machine.asking(rule, about: get, action).failure?.code == .connectionReset)
        #expect(machine.attempt == 4 && machine.attemptsInARow == 3)
    }

    @Test func aFailureTheRuleWouldNotMendEndsTheDownloadAtOnce() {
        let rule = DownloadRetryRule(DownloadOptions(retries: 5))
        var machine = CallStateMachine(continuing: get)
        _ = machine.start()
        let full = CourierError(code: .fileAccess, message: "disk full")
        _ = machine.reading()
        let action = machine.bodyFailed(full)
        #expect(machine.asking(rule, about: get, action).failure?.code == .fileAccess)
    }
}
