import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The decisions of a resumable upload's protocol, as a pure value: told what each request brought, it says what
/// to do next. It never trusts an offset it was not given by the server, so what it confirms (and the record
/// keeps) is never ahead of the server.
///
/// Whether and when to try again after a failure is not its decision: it says ``Action/retry(_:)``, and the
/// upload's ``CallStateMachine`` decides with the upload's rule (``ResumableUploadRetryRule``), told of every byte
/// the server confirms beyond what it had (``highestConfirmed``), so the failures before it stop counting.
///
/// ```
/// start ─▶ create ─▶ append(from: 0) ─▶ finished
///            │            │ cut, 5xx
///            │            ▼
///            │      retry ─(the call machine waits)─▶ askOffset ─▶ append(from: offset)
///            │                                 409 ─▶ append(from: the server's offset)
///            └──── 404 anywhere: startOver (the server forgot the upload) ─▶ create
/// ```
struct ResumableUploadStateMachine: Sendable {
    /// What the driver does next.
    enum Action: Equatable, Sendable {
        /// Creates the upload (`POST` with no data).
        case create
        /// Sends the file from `offset` to its end (`PATCH`).
        case append(from: Int64)
        /// Asks the server how much it has (`HEAD`).
        case askOffset
        /// The request failed in a way another try may mend: the call machine decides whether and when, then
        /// ``ResumableUploadStateMachine/resuming()`` says what that try is.
        case retry(CourierError)
        /// The server forgot the upload: create it again and send everything; `reason` is for the caller.
        case startOver(reason: String)
        /// The server has every byte.
        case finished
        /// Give up with this error.
        case fail(CourierError)
    }

    /// The file's length.
    let length: Int64
    /// Times the server may forget the upload before the upload gives up, so a server that forgets at once
    /// cannot loop.
    let maxStartsOver: Int
    /// The bytes the server confirmed it has.
    private(set) var confirmed: Int64 = 0
    /// The most bytes the server ever confirmed: only an offset past it is progress, so a server whose offsets
    /// zigzag cannot reset the count of failures.
    private(set) var highestConfirmed: Int64 = 0
    /// The upload's URL once created.
    private(set) var resource: URL?
    /// Times the server forgot the upload.
    private var startsOver = 0

    init(length: Int64, maxStartsOver: Int = 8) {
        self.length = length
        self.maxStartsOver = max(1, maxStartsOver)
    }

    /// The first step: create the upload, or ask a known one (from a record) how much it has.
    mutating func start(resuming resource: URL?) -> Action {
        guard let resource else { return .create }
        self.resource = resource
        return .askOffset
    }

    /// What the next try is, after the wait for a ``Action/retry(_:)`` or a pause: create the upload when it has
    /// no URL yet, else ask how much the server has.
    func resuming() -> Action {
        resource == nil ? .create : .askOffset
    }

    /// The creation's answer.
    mutating func created(status: HTTPResponse.Status, fields: HTTPFields, location: URL?) -> Action {
        guard (200..<300).contains(status.code) else { return refused(status) }
        guard let location else {
            return .fail(CourierError(code: .invalidResponse, message: "the upload was created without a Location"))
        }
        resource = location
        return confirm(ResumableUploadProtocol.offset(in: fields) ?? 0, complete: false)
    }

    /// The append's answer: the server's own once the upload completed, or a refusal.
    ///
    /// Finished means the server said the upload is complete and confirmed every byte; a success that says less
    /// (`Upload-Complete: ?0`, an offset short of the length) leaves the rest to send, and one that says nothing
    /// of either is checked by asking the offset.
    mutating func appended(status: HTTPResponse.Status, fields: HTTPFields) -> Action {
        let offset = ResumableUploadProtocol.offset(in: fields)
        let complete = ResumableUploadProtocol.isComplete(in: fields)
        switch status.code {
        case 200..<300:
            if complete == true, offset == length {
                confirmed = length
                highestConfirmed = length
                return .finished
            }
            guard let offset, complete != nil else { return .askOffset }
            return appendedShort(offset: offset)
        case 409:
            // The offset was not the server's: go on from the one it gives.
            guard let offset else { return failed(conflictWithoutOffset) }
            return appendedShort(offset: offset)
        default:
            return refused(status)
        }
    }

    /// An append ended with the server holding `offset` bytes and wanting more. Bytes beyond any it had before
    /// are progress, and the rest follows at once; otherwise it is a failure, retried like a cut connection, so
    /// a server that repeats an offset cannot have the file sent in a loop.
    private mutating func appendedShort(offset: Int64) -> Action {
        guard offset > highestConfirmed else {
            return .retry(
                CourierError(
                    code: .invalidResponse,
                    message: "the server took no more of the upload (it has \(offset) of \(length) bytes)"
                )
            )
        }
        return confirm(offset, complete: false)
    }

    /// The offset request's answer.
    mutating func offsetAnswered(status: HTTPResponse.Status, fields: HTTPFields) -> Action {
        guard (200..<300).contains(status.code) else { return refused(status) }
        guard let offset = ResumableUploadProtocol.offset(in: fields) else {
            return failed(
                CourierError(code: .invalidResponse, message: "the server's offset answer has no Upload-Offset")
            )
        }
        return confirm(offset, complete: ResumableUploadProtocol.isComplete(in: fields) ?? false)
    }

    /// A request failed before its answer (the connection was cut, a timeout): worth another try, which asks
    /// where the server got to, unless the upload was cancelled or its session closed.
    func failed(_ error: CourierError) -> Action {
        guard error.code != .cancelled, error.code != .sessionClosed else { return .fail(error) }
        return .retry(error)
    }

    /// The server now has `offset` bytes.
    private mutating func confirm(_ offset: Int64, complete: Bool) -> Action {
        guard offset >= 0, offset <= length else {
            return .fail(
                CourierError(
                    code: .invalidResponse,
                    message: "the server says it has \(offset) bytes of an upload of \(length)"
                )
            )
        }
        highestConfirmed = max(highestConfirmed, offset)
        confirmed = offset
        return complete && offset == length ? .finished : .append(from: offset)
    }

    /// An answer that is not a success: the upload is gone, the server is failing for now, or it refuses.
    private mutating func refused(_ status: HTTPResponse.Status) -> Action {
        let error = CourierError.httpStatus(
            status,
            bodyPreview: nil,
            url: resource.map { Redactor.standard.redact(urlText: $0.absoluteString) }
        )
        switch status.code {
        case 404 where resource != nil, 410 where resource != nil:
            startsOver += 1
            guard startsOver < maxStartsOver else { return .fail(error) }
            resource = nil
            confirmed = 0
            return .startOver(reason: "the server no longer has the upload (\(status.code)); it starts again")
        case 408, 429, 500..<600:
            return failed(error)
        default:
            return .fail(error)
        }
    }

    private var conflictWithoutOffset: CourierError {
        CourierError(code: .invalidResponse, message: "the server refused the offset (409) without giving its own")
    }
}
