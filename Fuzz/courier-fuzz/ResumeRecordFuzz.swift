import Courier

/// The resume record's decoder: damaged or inconsistent records are absent, never a crash; a record that
/// decodes is consistent and survives encode → decode.
enum ResumeRecordFuzz {
    static func run(_ input: FuzzInput) throws(InvariantViolation) {
        // The input as a record, and as the JSON of one behind a valid header so the fuzzer reaches the decoder.
        for data in [input.data, ResumeRecord.sealed(json: input.data)] {
            guard let record = ResumeRecord.decode(data) else { continue }
            try require(record.isConsistent, "an inconsistent record was accepted")
            let again = (try? record.encoded()).flatMap(ResumeRecord.decode)
            try require(again == record, "a decoded record does not survive encode → decode")
        }
    }
}
