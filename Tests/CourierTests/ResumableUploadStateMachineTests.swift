import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite("Resumable upload state machine")
struct ResumableUploadStateMachineTests {
    private let resource = URL(string: "http://127.0.0.1:1/resumable_upload/1")!

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
        #expect(machine.appended(status: .ok, fields: [:]) == .askOffset(after: .zero))  // says nothing: ask
        #expect(machine.confirmed == 90)
        // The spelling of the older drafts, which NIOResumableUpload puts on the answer that completes an upload.
        var older = fields(offset: 100)
        older[ResumableUploadProtocol.incompleteField] = "?0"
        #expect(machine.appended(status: .ok, fields: older) == .finished)
    }

    /// A 409 that repeats the offset is no progress: each waits the backoff and counts, until the limit.
    @Test func aConflictThatRepeatsTheOffsetCountsAsAFailure() {
        var machine = ResumableUploadStateMachine(length: 100, maxFailuresInARow: 3, baseDelay: .milliseconds(10))
        _ = machine.start(resuming: resource)
        #expect(machine.offsetAnswered(status: .noContent, fields: fields(offset: 20)) == .append(from: 20))
        #expect(machine.appended(status: .conflict, fields: fields(offset: 20)) == .askOffset(after: .milliseconds(10)))
        #expect(machine.offsetAnswered(status: .noContent, fields: fields(offset: 20)) == .append(from: 20))
        #expect(machine.appended(status: .conflict, fields: fields(offset: 20)) == .askOffset(after: .milliseconds(20)))
        #expect(machine.offsetAnswered(status: .noContent, fields: fields(offset: 20)) == .append(from: 20))
        guard case .fail(let error) = machine.appended(status: .conflict, fields: fields(offset: 20)) else {
            Issue.record("a third 409 without progress gives up")
            return
        }
        #expect(error.code == .invalidResponse)
    }

    /// Offsets that zigzag are no progress: only bytes beyond any the server confirmed before reset the count.
    @Test func zigzaggingOffsetsDoNotResetTheFailureCount() {
        var machine = ResumableUploadStateMachine(length: 100, maxFailuresInARow: 3, baseDelay: .milliseconds(10))
        _ = machine.start(resuming: resource)
        #expect(machine.offsetAnswered(status: .noContent, fields: fields(offset: 50)) == .append(from: 50))
        let cut = CourierError(code: .connectionReset, message: "cut")
        #expect(machine.failed(cut) == .askOffset(after: .milliseconds(10)))
        #expect(machine.offsetAnswered(status: .noContent, fields: fields(offset: 30)) == .append(from: 30))
        #expect(machine.failed(cut) == .askOffset(after: .milliseconds(20)))
        #expect(machine.offsetAnswered(status: .noContent, fields: fields(offset: 50)) == .append(from: 50))
        guard case .fail = machine.failed(cut) else {
            Issue.record("50 again is not progress past 50: the third failure in a row gives up")
            return
        }
    }

    @Test func aCutAsksTheOffsetWithGrowingWaitsAndGoesOnFromIt() {
        var machine = ResumableUploadStateMachine(length: 100, maxFailuresInARow: 4, baseDelay: .milliseconds(10))
        _ = machine.start(resuming: nil)
        _ = machine.created(status: .created, fields: fields(offset: 0), location: resource)
        #expect(
            machine.failed(CourierError(code: .connectionReset, message: "cut")) == .askOffset(after: .milliseconds(10))
        )
        #expect(
            machine.failed(CourierError(code: .connectionReset, message: "cut")) == .askOffset(after: .milliseconds(20))
        )
        #expect(
            machine.offsetAnswered(status: .noContent, fields: fields(offset: 40, complete: false)) == .append(from: 40)
        )
        // progress resets the count of failures in a row
        #expect(
            machine.failed(CourierError(code: .connectionReset, message: "cut")) == .askOffset(after: .milliseconds(10))
        )
        #expect(
            machine.failed(CourierError(code: .connectionReset, message: "cut")) == .askOffset(after: .milliseconds(20))
        )
        #expect(
            machine.failed(CourierError(code: .connectionReset, message: "cut")) == .askOffset(after: .milliseconds(40))
        )
        guard case .fail(let error) = machine.failed(CourierError(code: .connectionReset, message: "cut")) else {
            Issue.record("a fourth failure in a row gives up")
            return
        }
        #expect(error.code == .connectionReset)
        #expect(machine.confirmed == 40)
    }

    @Test func aConflictGoesOnFromTheServersOffset() {
        var machine = ResumableUploadStateMachine(length: 100)
        #expect(machine.start(resuming: resource) == .askOffset(after: .zero))
        #expect(machine.offsetAnswered(status: .noContent, fields: fields(offset: 10)) == .append(from: 10))
        #expect(machine.appended(status: .conflict, fields: fields(offset: 60, complete: false)) == .append(from: 60))
        guard case .askOffset = machine.appended(status: .conflict, fields: [:]) else {
            Issue.record("a 409 without an offset asks the server for it")
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
            guard case .askOffset = action else {
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
        #expect(other.created(status: .serviceUnavailable, fields: [:], location: nil) == .create)
        guard case .fail = other.created(status: .created, fields: [:], location: nil) else {
            Issue.record("a creation without a Location fails")
            return
        }
        _ = other.created(status: .created, fields: fields(offset: 0), location: resource)
        guard case .askOffset = other.appended(status: .badGateway, fields: [:]) else {
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
