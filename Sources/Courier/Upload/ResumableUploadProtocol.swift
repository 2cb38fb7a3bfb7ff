import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The wire format of draft-ietf-httpbis-resumable-upload as Courier speaks it: interop version 6, the newest
/// that swift-nio-extras' `NIOResumableUpload` serves.
///
/// An upload is created first with an empty body and `Upload-Complete: ?0`, and its data appended after: the
/// draft lets a client send data with the creation and learn the upload's URL from a `104` interim response,
/// but AsyncHTTPClient drops interim responses, so a connection cut during that first request would leave the
/// client without the URL to resume at. Creating first costs one round trip and makes every data byte resumable.
enum ResumableUploadProtocol {
    static let interopVersion = "6"
    static let versionField = HTTPField.Name("Upload-Draft-Interop-Version")!
    static let completeField = HTTPField.Name("Upload-Complete")!
    static let offsetField = HTTPField.Name("Upload-Offset")!
    static let lengthField = HTTPField.Name("Upload-Length")!
    /// The media type of an append's body.
    static let partialUpload = "application/partial-upload"

    /// The headers of the creation: no data yet, more to come, and the whole length announced.
    static func creationFields(length: Int64) -> HTTPFields {
        var fields = HTTPFields()
        fields[versionField] = interopVersion
        fields[completeField] = "?0"
        fields[lengthField] = String(length)
        return fields
    }

    /// The headers of an append from `offset` that carries the rest of the upload.
    static func appendFields(offset: Int64) -> HTTPFields {
        var fields = HTTPFields()
        fields[versionField] = interopVersion
        fields[completeField] = "?1"
        fields[offsetField] = String(offset)
        fields[.contentType] = partialUpload
        return fields
    }

    /// The headers of an offset request (`HEAD`) and of a cancellation (`DELETE`).
    static func plainFields() -> HTTPFields {
        var fields = HTTPFields()
        fields[versionField] = interopVersion
        return fields
    }

    /// `Upload-Offset` of an answer, a structured-field integer; `nil` when absent or malformed.
    static func offset(in fields: HTTPFields) -> Int64? {
        StructuredFieldValue.integer(fields[offsetField])
    }

    /// The older drafts' inverse of `Upload-Complete`, which swift-nio-extras 1.35's `NIOResumableUpload` still
    /// puts on the answer that completes an upload of interop version 6.
    static let incompleteField = HTTPField.Name("Upload-Incomplete")!

    /// `Upload-Complete` of an answer, a structured-field boolean (`?1` or `?0`), or the inverse of
    /// `Upload-Incomplete` when only that is there; `nil` when both are absent or malformed.
    static func isComplete(in fields: HTTPFields) -> Bool? {
        StructuredFieldValue.boolean(fields[completeField])
            ?? StructuredFieldValue.boolean(fields[incompleteField]).map { !$0 }
    }
}
