#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What a resumable upload reports as it goes.
public enum ResumableUploadEvent: Sendable, Hashable {
    /// The server created the upload at this URL.
    case created(URL)
    /// The upload goes on from the server's offset: after a cut connection, or in a new process from the record.
    case resumed(from: Int64)
    /// How far the upload has come: the bytes the server confirmed plus those of the request going out, of the
    /// whole; about ten a second, and the last one when every byte has gone out.
    case progress(UploadProgress)
    /// The upload starts again from the first byte, for the reason given (the file changed, the server forgot
    /// the upload).
    case startedOver(reason: String)
    /// Sending is held back until ``ResumableUpload/resume()``.
    case paused
}

/// How a resumable upload ended.
public struct ResumableUploadResult: Sendable {
    /// The upload's URL on the server.
    public var resource: URL
    /// The final status and body, the server's answer to the request that completed the upload; `nil` when the
    /// upload completed but that answer was lost (the server then said it has every byte).
    public var response: ResponseBody?
    /// Bytes put on the wire in all, resends included.
    public var bytesSent: Int64
}
