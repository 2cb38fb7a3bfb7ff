#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension Session {
    /// Uploads the file at `file` to `target` with draft-ietf-httpbis-resumable-upload (interop version 6, as
    /// swift-nio-extras' `NIOResumableUpload` serves it): the upload is created, then its data appended; after a
    /// cut connection the server is asked how much it has and only the rest is sent. A record beside the file,
    /// `<file>.courier-upload`, lets a new process resume after this one died, as long as the file is unchanged
    /// (its size and modification time, and its SHA-256 with ``ResumableUploadOptions/checksDigest``); a changed
    /// file is sent whole, with a ``ResumableUploadEvent/startedOver(reason:)``.
    ///
    /// The upload starts when ``ResumableUpload/result()`` is first awaited.
    ///
    /// ```swift
    /// let upload = session.resumableUpload(URL(filePath: "/tmp/big.iso"), to: URL(string: "https://example.com/files")!)
    /// let result = try await upload.result()
    /// print(result.bytesSent, result.response?.status ?? .ok)
    /// ```
    public nonisolated func resumableUpload(
        _ file: URL,
        to target: URL,
        options: ResumableUploadOptions = ResumableUploadOptions()
    ) -> ResumableUpload {
        ResumableUpload(session: self, file: file, target: target, options: options)
    }
}
