/// The parsers and encoders that take bytes from the network, the disk or the user, each with the invariants
/// that must hold for any input: no crash, no hang, and the properties its documentation promises.
enum FuzzTarget: String, CaseIterable, Sendable {
    /// `CacheEntryCodec`: the disk cache's file format.
    case cacheEntry = "cache-entry"
    /// `ResumeRecord`: the sidecar of a partial download.
    case resumeRecord = "resume-record"
    /// `DownloadFileName`: names from `Content-Disposition` and URLs.
    case fileName = "file-name"
    /// `HeaderValidation`: the rule that keeps header injection off the wire.
    case header
    /// `MultipartFormData`: names and part headers inside the framing.
    case multipart
    /// `URLBuilder` and `FormEncoding`: paths, queries and form bodies.
    case url
    /// `ContentRange` and `RangeAnswer`: the numbers a 206 and a resume carry.
    case contentRange = "content-range"
    /// `URLBuilder.validate` and `RedirectState`: ports and redirect targets before NIO sees them.
    case redirect
    /// NIO's response decoder and `ResponseStatusGuard`: what reaches AsyncHTTPClient's state machine.
    case responseHead = "response-head"

    /// Runs one input; throws when an invariant does not hold.
    func run(_ input: FuzzInput) throws(InvariantViolation) {
        switch self {
        case .cacheEntry: try CacheEntryFuzz.run(input)
        case .resumeRecord: try ResumeRecordFuzz.run(input)
        case .fileName: try FileNameFuzz.run(input)
        case .header: try HeaderFuzz.run(input)
        case .multipart: try MultipartFuzz.run(input)
        case .url: try URLFuzz.run(input)
        case .contentRange: try ContentRangeFuzz.run(input)
        case .redirect: try RedirectFuzz.run(input)
        case .responseHead: try ResponseHeadFuzz.run(input)
        }
    }
}

/// A property a target promises that an input broke.
struct InvariantViolation: Error, CustomStringConvertible {
    let description: String
}

/// Throws `InvariantViolation(message)` unless `condition` holds.
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(InvariantViolation) {
    if !condition { throw InvariantViolation(description: message()) }
}
