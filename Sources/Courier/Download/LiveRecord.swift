/// The resume record while a transfer runs: every connection adds its bytes here, the checkpointer saves a
/// snapshot, and the progress sampler reads the count. A lock, not an actor, because it is touched for every
/// chunk that arrives.
final class LiveRecord: Sendable {
    private let record: Locked<ResumeRecord>

    init(_ record: ResumeRecord) { self.record = Locked(record) }

    /// A copy of the record as it is now.
    func snapshot() -> ResumeRecord { record.withLock { $0 } }

    /// Replaces the whole record (a fresh start, a restart, a new segment plan).
    func replace(with newRecord: ResumeRecord) { record.withLock { $0 = newRecord } }

    /// Segment `index` as it is now.
    func segment(_ index: Int) -> ResumeRecord.Segment { record.withLock { $0.segments[index] } }

    /// Counts `count` more bytes written for segment `index`.
    func advance(_ index: Int, by count: Int64) { record.withLock { $0.segments[index].written += count } }

    /// Bytes written so far and the total length when known.
    func counts() -> (written: Int64, total: Int64?) { record.withLock { ($0.writtenBytes, $0.totalLength) } }

    /// Records the version and length of the file from the first answer. A single open-ended segment learns
    /// its end from the length.
    func adopt(validator: EntityValidator, totalLength: Int64?) {
        record.withLock { record in
            record.validator = validator
            record.totalLength = totalLength
            if record.segments.count == 1, record.segments[0].end == nil { record.segments[0].end = totalLength }
        }
    }

    /// Marks the single stream finished at its current length (a body without a declared length has ended).
    func finishOpenEnded(_ index: Int) {
        record.withLock { record in
            let next = record.segments[index].next
            record.segments[index].end = next
            record.totalLength = next
        }
    }

    /// Marks segment `index` complete at `length` (a 416 said the file is `length` bytes and all are here).
    func complete(_ index: Int, length: Int64) {
        record.withLock { record in
            record.totalLength = length
            record.segments[index].end = length
            record.segments[index].written = length - record.segments[index].start
        }
    }
}
