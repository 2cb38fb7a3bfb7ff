import Crypto

#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// The sidecar of a partial download, `<destination>.part.resume`: which file it is, which version, and which
/// bytes of the part file are known to be on disk. Written atomically; ``decode(_:)`` treats anything damaged
/// or inconsistent as absent, so a truncated record means "start again", never a crash.
package struct ResumeRecord: Codable, Equatable, Sendable {
    /// One range of the file fetched by one connection: `start ..< end`, of which `written` bytes from `start`
    /// are in the part file. `end` is `nil` while the length is unknown (a single stream).
    package struct Segment: Codable, Equatable, Sendable {
        package var start: Int64
        package var end: Int64?
        package var written: Int64

        /// The next byte to fetch; saturates rather than traps on a record whose numbers overflow, which
        /// ``ResumeRecord/isConsistent`` then refuses.
        var next: Int64 {
            let (sum, overflow) = start.addingReportingOverflow(written)
            return overflow ? .max : sum
        }
        /// Whether every byte of the segment is written.
        var isDone: Bool { end.map { next >= $0 } ?? false }
        /// The request for what is missing.
        var missing: ByteRangeRequest { ByteRangeRequest(start: next, end: end) }
    }

    var url: String
    var validator: EntityValidator
    var totalLength: Int64?
    var segments: [Segment]

    /// A record for a download that has nothing yet.
    static func fresh(url: String) -> ResumeRecord {
        ResumeRecord(
            url: url,
            validator: EntityValidator(),
            totalLength: nil,
            segments: [Segment(start: 0, end: nil, written: 0)]
        )
    }

    /// Bytes in the part file that belong to the download.
    var writtenBytes: Int64 { segments.reduce(0) { $0 + $1.written } }

    /// The byte ranges known to be in the part file.
    package var verifiedRanges: [Range<Int64>] { segments.filter { $0.written > 0 }.map { $0.start..<$0.next } }

    /// Whether the segments are in order, do not overlap, and fit the total length.
    package var isConsistent: Bool {
        var previousEnd: Int64 = 0
        for segment in segments {
            guard segment.start >= previousEnd, segment.written >= 0,
                !segment.start.addingReportingOverflow(segment.written).overflow
            else { return false }
            if let end = segment.end {
                guard end >= segment.start, segment.next <= end else { return false }
                previousEnd = end
            } else {
                guard segment.start == segments.last?.start else { return false }  // only the last may be open-ended
                previousEnd = segment.next
            }
            if let totalLength, previousEnd > totalLength { return false }
        }
        return !segments.isEmpty
    }

    private static let magic = "courier-resume 1 "

    /// `courier-resume 1 <SHA-256 of the JSON>\n<JSON>`.
    package func encoded() throws -> Data {
        try SealedJSON.seal(self, magic: Self.magic)
    }

    /// `json` behind the header line that names its digest.
    package static func sealed(json: Data) -> Data {
        SealedJSON.seal(json: json, magic: magic)
    }

    /// The record in `data`, or `nil` when it is truncated, damaged, foreign or inconsistent.
    package static func decode(_ data: Data) -> ResumeRecord? {
        guard let record = SealedJSON.open(ResumeRecord.self, from: data, magic: magic), record.isConsistent else {
            return nil
        }
        return record
    }
}

extension ResumeRecord {
    /// `totalLength` bytes split into at most `connections` segments of at least `minimumBytes` each (the last
    /// one takes the remainder); a single segment when the file is too small to be worth splitting.
    package static func segments(totalLength: Int64, connections: Int, minimumBytes: Int64) -> [Segment] {
        let count = Int(max(1, min(Int64(max(1, connections)), totalLength / max(1, minimumBytes))))
        let size = totalLength / Int64(count)
        return (0..<count).map { index in
            let start = Int64(index) * size
            let end = index == count - 1 ? totalLength : start + size
            return Segment(start: start, end: end, written: 0)
        }
    }
}
