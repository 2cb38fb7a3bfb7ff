package import HTTPTypes

/// The bytes one request asks for: from `start` to `end` (exclusive), or to the end of the file when `end`
/// is `nil`. A request from zero to the end sends no `Range` at all.
package struct ByteRangeRequest: Hashable, Sendable {
    package var start: Int64
    package var end: Int64?

    /// From `start` to `end` (exclusive), or to the end of the file.
    package init(start: Int64, end: Int64?) {
        self.start = start
        self.end = end
    }

    /// Whether the request carries a `Range` header.
    var isPartial: Bool { start > 0 || end != nil }

    /// `bytes=a-b` or `bytes=a-`.
    package var header: String { end.map { "bytes=\(start)-\($0 - 1)" } ?? "bytes=\(start)-" }
}

/// What to do with the answer to a (possibly ranged) download request: the resume rules, as a pure function
/// of what was asked and what came back.
package enum RangeAnswer: Equatable, Sendable {
    /// Write the body at `offset`; the file is `completeLength` bytes long when known.
    case write(offset: Int64, completeLength: Int64?)
    /// The server sent the whole file (it ignored the range, or the file changed): throw the partial bytes
    /// away and write this body from zero.
    case replace(completeLength: Int64?)
    /// The answer cannot be used and the partial bytes may be stale: start again with a fresh request.
    case restart
    /// 416 with `bytes */N` and N is what is already on disk: nothing is missing, go and verify.
    case complete(length: Int64)
    /// The answer contradicts the request; the partial file is left alone.
    case fail(CourierError)

    /// Decides. `known` is the version and length recorded so far (nil for a fresh download); `localLength`
    /// is the number of bytes already on disk for a single-stream download (for the 416 rule).
    package static func decide(
        request: ByteRangeRequest,
        status: HTTPResponse.Status,
        headers: HTTPFields,
        known: EntityValidator?,
        knownLength: Int64?,
        localLength: Int64
    ) -> RangeAnswer {
        let declared = headers[.contentLength].flatMap { Int64($0) }
        switch status.code {
        case 200:
            guard request.isPartial else { return .write(offset: 0, completeLength: declared) }
            return .replace(completeLength: declared)
        case 206:
            guard request.isPartial else {
                return .fail(.rangeMismatch("a 206 answered a request that asked for no range"))
            }
            guard let value = headers[.contentRange], let contentRange = ContentRange(value),
                let range = contentRange.range,
                let rangeEnd = contentRange.end, let rangeLength = contentRange.length
            else {
                return .fail(.rangeMismatch("a 206 came without a usable Content-Range"))
            }
            if let known, !known.isSameVersion(as: EntityValidator(headers)) { return .restart }
            let wanted = "\(request.start)-\(request.end.map { String($0 - 1) } ?? "end")"
            guard range.lowerBound == request.start else {
                return .fail(.rangeMismatch("asked for bytes \(wanted), got \(value)"))
            }
            let completeLength = contentRange.completeLength ?? knownLength
            if let end = request.end {
                guard rangeEnd == end else { return .fail(.rangeMismatch("asked for bytes \(wanted), got \(value)")) }
            } else if let completeLength, rangeEnd != completeLength {
                return .fail(.rangeMismatch("asked for bytes \(wanted), got \(value)"))
            }
            if let knownLength, let completeLength, knownLength != completeLength {
                return .fail(
                    .rangeMismatch(
                        "the file was \(knownLength) bytes long, the server now says \(completeLength) (\(value))"
                    )
                )
            }
            if let declared, declared != rangeLength {
                return .fail(
                    .rangeMismatch(
                        "Content-Range \(value) carries \(rangeLength) bytes but Content-Length says \(declared)"
                    )
                )
            }
            return .write(offset: request.start, completeLength: completeLength)
        case 416:
            if let value = headers[.contentRange], let contentRange = ContentRange(value), contentRange.range == nil,
                let length = contentRange.completeLength, length == localLength, request.end == nil
            {
                return .complete(length: length)
            }
            return .restart
        default:
            return .fail(.httpStatus(status, bodyPreview: nil))
        }
    }
}
