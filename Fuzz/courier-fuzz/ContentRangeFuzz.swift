import Courier
import HTTPTypes

/// `Content-Range` and the resume arithmetic: any header, any numbers a request or a record holds, and the
/// resume rules answer without a trap; a range that parses has an end and a length that fit 64 bits, and a
/// `write` answer continues exactly where the request asked.
enum ContentRangeFuzz {
    static func run(_ input: FuzzInput) throws(InvariantViolation) {
        let pieces = input.strings(4)
        let (value, length, startText, endText) = (pieces[0], pieces[1], pieces[2], pieces[3])
        if let range = ContentRange(value) {
            if let bounds = range.range, let end = range.end, let count = range.length {
                try require(
                    end > bounds.upperBound && count > 0 && count <= end,
                    "\(value.debugDescription) gives end \(end), length \(count)"
                )
                if let complete = range.completeLength {
                    try require(end <= complete, "\(value.debugDescription) ends past its length")
                }
            } else {
                try require(
                    range.range == nil && range.end == nil && range.completeLength != nil,
                    "\(value.debugDescription) is half a range"
                )
            }
        }
        // Numbers as a request or a resume record may hold them, including the edges of Int64.
        let start = number(startText) ?? 0
        let end = number(endText).map { max($0, start) }
        guard start >= 0 else { return }
        var fields = HTTPFields()
        fields[.contentRange] = value
        if !length.isEmpty { fields[.contentLength] = length }
        for status in [HTTPResponse.Status.partialContent, .ok, .rangeNotSatisfiable] {
            for known in [nil, number(length)] as [Int64?] {
                let request = ByteRangeRequest(start: start, end: end)
                let answer = RangeAnswer.decide(
                    request: request,
                    status: status,
                    headers: fields,
                    known: nil,
                    knownLength: known,
                    localLength: start
                )
                if case .write(let offset, _) = answer, status == .partialContent {
                    try require(offset == start, "a 206 for \(start) is written at \(offset)")
                }
                _ = request.header
            }
        }
        // A length the server announced, split for several connections: the segments tile it exactly.
        if let total = number(length), total >= 0 {
            let connections = Int(truncatingIfNeeded: start % 70)
            let segments = ResumeRecord.segments(
                totalLength: total,
                connections: connections,
                minimumBytes: max(1, end ?? 1)
            )
            var next: Int64 = 0
            for segment in segments {
                try require(
                    segment.start == next && (segment.end ?? -1) >= segment.start,
                    "segments of \(total) do not tile it"
                )
                next = segment.end ?? next
            }
            try require(next == total && segments.count <= max(1, connections), "segments of \(total) end at \(next)")
        }
    }

    /// The text as a 64-bit number, when it is one; edges by name so the fuzzer reaches them at once.
    private static func number(_ text: String) -> Int64? {
        switch text {
        case "max": .max
        case "max-1": .max - 1
        default: Int64(text)
        }
    }
}
