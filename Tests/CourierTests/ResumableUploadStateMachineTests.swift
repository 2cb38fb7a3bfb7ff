import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite("Resumable upload state machine")
struct ResumableUploadStateMachineTests {
    private let resource = URL(string: "http://127.0.0.1:1/resumable_upload/1")!
    private let cut = CourierError(code: .connectionReset, message: "cut")

    private func fields(offset: Int64?, complete: Bool? = nil) -> HTTPFields {
        var fields = HTTPFields()
        if let offset { fields[ResumableUploadProtocol.offsetField] = String(offset) }
        if let complete { fields[ResumableUploadProtocol.completeField] = complete ? "?1" : "?0" }
        return fields
    }

    @Test func createdThenAppendedInOneGo() {
        var machine = ResumableUploadStateMachine(length: 100)
        #expect(machine.start(resuming: nil) == .create)
        #expect(machine.created(status: .created, fields: fields(offset: 0), location: resource) == .append(from: 0))
        #expect(machine.resource == resource && machine.confirmed == 0)
        #expect(machine.appended(status: .created, fields: fields(offset: 100, complete: true)) == .finished)
        #expect(machine.confirmed == 100)
    }

    /// Finished means the server said complete and confirmed every byte (the issue's false success).
    @Test func aSuccessIsFinishedOnlyWhenTheServerSaysCompleteWithEveryByte() {
        var machine = ResumableUploadStateMachine(length: 100)
        _ = machine.start(resuming: resource)
        #expect(machine.offsetAnswered(status: .noContent, fields: fields(offset: 0)) == .append(from: 0))
        #expect(machine.appended(status: .ok, fields: fields(offset: 40, complete: false)) == .append(from: 40))
        #expect(machine.appended(status: .ok, fields: fields(offset: 90, complete: true)) == .append(from: 90))
        #expect(machine.appended(status: .ok, fields: [:]) == .askOffset)  // says nothing: ask
        #expect(machine.confirmed == 90)
        // The spelling of the older drafts, which NIOResumableUpload puts on the answer that completes an upload.
        var older = fields(offset: 100)
        older[ResumableUploadProtocol.incompleteField] = "?0"
        #expect(machine.appended(status: .ok, fields: older) == .finished)
    }

    /// A 409 that repeats the offset is no progress: each is a failure the call machine retries after the
    /// backoff, until the limit.
    @Test func aConflictThatRepeatsTheOffsetCountsAsAFailure() {
        var upload = Driven(length: 100, maxFailuresInARow: 3)
        _ = upload.machine.start(resuming: resource)
        #expect(
            upload.feed { $0.offsetAnswered(status: .noContent, fields: fields(offset: 20)) }
                == .next(.append(from: 20))
        )
        #expect(upload.feed { $0.appended(status: .conflict, fields: fields(offset: 20)) } == .waits(.milliseconds(10)))
        #expect(
            upload.feed { $0.offsetAnswered(status: .noContent, fields: fields(offset: 20)) }
                == .next(.append(from: 20))
        )
        #expect(upload.feed { $0.appended(status: .conflict, fields: fields(offset: 20)) } == .waits(.milliseconds(20)))
        #expect(
            upload.feed { $0.offsetAnswered(status: .noContent, fields: fields(offset: 20)) }
                == .next(.append(from: 20))
        )
        #expect(
            upload.feed { $0.appended(status: .conflict, fields: fields(offset: 20)) } == .fails(.invalidResponse),
            "a third 409 without progress gives up"
        )
    }

    /// Offsets that zigzag are no progress: only bytes beyond any the server confirmed before reset the count.
    @Test func zigzaggingOffsetsDoNotResetTheFailureCount() {
        var upload = Driven(length: 100, maxFailuresInARow: 3)
        _ = upload.machine.start(resuming: resource)
        #expect(
            upload.feed { $0.offsetAnswered(status: .noContent, fields: fields(offset: 50)) }
                == .next(.append(from: 50))
        )
        #expect(upload.feed { $0.failed(cut) } == .waits(.milliseconds(10)))
        #expect(
            upload.feed { $0.offsetAnswered(status: .noContent, fields: fields(offset: 30)) }
                == .next(.append(from: 30))
        )
        #expect(upload.feed { $0.failed(cut) } == .waits(.milliseconds(20)))
        #expect(
            upload.feed { $0.offsetAnswered(status: .noContent, fields: fields(offset: 50)) }
                == .next(.append(from: 50))
        )
        #expect(
            upload.feed { $0.failed(cut) } == .fails(.connectionReset),
            "50 again is not progress past 50: the third failure in a row gives up"
        )
    }

    @Test func aCutAsksTheOffsetWithGrowingWaitsAndGoesOnFromIt() {
        var upload = Driven(length: 100, maxFailuresInARow: 4)
        _ = upload.machine.start(resuming: nil)
        _ = upload.feed { $0.created(status: .created, fields: fields(offset: 0), location: resource) }
        #expect(upload.feed { $0.failed(cut) } == .waits(.milliseconds(10)))
        #expect(upload.machine.resuming() == .askOffset, "after the wait, the server is asked how much it has")
        #expect(upload.feed { $0.failed(cut) } == .waits(.milliseconds(20)))
        #expect(
            upload.feed { $0.offsetAnswered(status: .noContent, fields: fields(offset: 40, complete: false)) }
                == .next(.append(from: 40))
        )
        // progress resets the count of failures in a row
        #expect(upload.feed { $0.failed(cut) } == .waits(.milliseconds(10)))
        #expect(upload.feed { $0.failed(cut) } == .waits(.milliseconds(20)))
        #expect(upload.feed { $0.failed(cut) } == .waits(.milliseconds(40)))
        #expect(upload.feed { $0.failed(cut) } == .fails(.connectionReset), "a fourth failure in a row gives up")
        #expect(upload.machine.confirmed == 40)
    }

    @Test func aConflictGoesOnFromTheServersOffset() {
        var machine = ResumableUploadStateMachine(length: 100)
        #expect(machine.start(resuming: resource) == .askOffset)
        #expect(machine.offsetAnswered(status: .noContent, fields: fields(offset: 10)) == .append(from: 10))
        #expect(machine.appended(status: .conflict, fields: fields(offset: 60, complete: false)) == .append(from: 60))
        guard case .retry = machine.appended(status: .conflict, fields: [:]) else {
            Issue.record("a 409 without an offset is retried, which asks the server for it")
            return
        }
    }

    @Test func aForgottenUploadStartsOverAndTheOffsetIsNeverTrustedPastTheLength() {
        var machine = ResumableUploadStateMachine(length: 100)
        _ = machine.start(resuming: resource)
        guard case .startOver = machine.offsetAnswered(status: .notFound, fields: [:]) else {
            Issue.record("a 404 starts over")
            return
        }
        #expect(machine.resource == nil && machine.confirmed == 0)
        #expect(machine.created(status: .created, fields: fields(offset: 0), location: resource) == .append(from: 0))
        guard case .fail(let error) = machine.offsetAnswered(status: .noContent, fields: fields(offset: 101)) else {
            Issue.record("an offset past the length is refused")
            return
        }
        #expect(error.code == .invalidResponse)
        var other = ResumableUploadStateMachine(length: 100)
        _ = other.start(resuming: resource)
        for bad in ["-1", "1e3", "+5", "99999999999999999999"] {
            var malformed = HTTPFields()
            malformed[ResumableUploadProtocol.offsetField] = bad
            let action = other.offsetAnswered(status: .noContent, fields: malformed)
            guard case .retry = action else {
                Issue.record("\(bad) is not an offset: \(action)")
                return
            }
        }
    }

    @Test func theOffsetAnswerOfACompleteUploadFinishesIt() {
        var machine = ResumableUploadStateMachine(length: 100)
        _ = machine.start(resuming: resource)
        #expect(machine.offsetAnswered(status: .noContent, fields: fields(offset: 100, complete: true)) == .finished)
    }

    @Test func refusalsFailAndServerErrorsAreAskedAgain() {
        var machine = ResumableUploadStateMachine(length: 100)
        _ = machine.start(resuming: nil)
        guard case .fail(let error) = machine.created(status: .forbidden, fields: [:], location: nil) else {
            Issue.record("a 403 fails")
            return
        }
        #expect(error.code == .httpStatus)
        var other = ResumableUploadStateMachine(length: 100)
        _ = other.start(resuming: nil)
        guard case .retry = other.created(status: .serviceUnavailable, fields: [:], location: nil) else {
            Issue.record("a 503 is retried")
            return
        }
        #expect(other.resuming() == .create, "the retry creates the upload, which has no URL yet")
        guard case .fail = other.created(status: .created, fields: [:], location: nil) else {
            Issue.record("a creation without a Location fails")
            return
        }
        _ = other.created(status: .created, fields: fields(offset: 0), location: resource)
        guard case .retry = other.appended(status: .badGateway, fields: [:]) else {
            Issue.record("a 502 asks again")
            return
        }
        guard case .fail(let cancelled) = other.failed(.cancelled()) else {
            Issue.record("cancellation ends it")
            return
        }
        #expect(cancelled.code == .cancelled)
    }
}

/// The upload's protocol machine and its call machine, driven as ``ResumableUpload`` drives them: the call machine
/// gives each failure the protocol machine calls worth a retry its verdict, told of every byte the server
/// confirms beyond what it had.
private struct Driven {
    enum Step: Equatable {
        case next(ResumableUploadStateMachine.Action)
        case waits(Duration)
        case fails(CourierError.Code)
    }

    var machine: ResumableUploadStateMachine
    var retries: ResumableUploadRetries

    init(length: Int64, maxFailuresInARow: Int) {
        machine = ResumableUploadStateMachine(length: length, maxStartsOver: maxFailuresInARow)
        let options = ResumableUploadOptions(maxFailuresInARow: maxFailuresInARow, retryDelay: .milliseconds(10))
        retries = ResumableUploadRetries(
            target: URL(string: "http://127.0.0.1:1/files")!,
            rule: ResumableUploadRetryRule(options)
        )
    }

    /// Tells the protocol machine one thing; a retry it asks for is decided by the call machine.
    mutating func feed(_ event: (inout ResumableUploadStateMachine) -> ResumableUploadStateMachine.Action) -> Step {
        let confirmed = machine.highestConfirmed
        let action = event(&machine)
        if machine.highestConfirmed > confirmed { retries.call.progressed() }
        guard case .retry(let error) = action else { return .next(action) }
        switch retries.decide(after: error) {
        case .wait(let delay):
            retries.slept()
            return .waits(delay)
        case .fail(let failure):
            return .fails(failure.code)
        }
    }
}
