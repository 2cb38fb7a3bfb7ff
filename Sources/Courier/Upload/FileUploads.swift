#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// What became of each file of ``Session/uploadFiles(_:to:field:fields:gzipLevel:options:)``, in input order.
public struct FileUploadOutcome: Sendable {
    /// The files, in the order they were given.
    public let files: [URL]
    /// One result per file, in the same order.
    public let batch: BatchOutcome<Data>

    /// The files that did not upload, in input order (WYNetwork's `uploadFailedImages`): retry these.
    public var failedFiles: [URL] { batch.failedIndices.map { files[$0] } }
    /// Whether every file uploaded.
    public var allSucceeded: Bool { batch.allSucceeded }
}

extension Session {
    /// Uploads each file as its own `multipart/form-data` POST to `path` (the file as part `field`, then the
    /// text `fields`), at most ``BatchOptions/concurrency`` at a time. One file failing, unreadable included,
    /// does not stop the others (unless ``BatchOptions/mode`` is fail-fast); the outcome names the failures.
    ///
    /// ```swift
    /// let outcome = try await session.uploadFiles(photos, to: "/photos", fields: [("album", "holiday")])
    /// for file in outcome.failedFiles { print("not sent:", file.lastPathComponent) }
    /// ```
    ///
    /// Throws only ``CourierError/Code/cancelled``.
    public nonisolated func uploadFiles(
        _ files: [URL],
        to path: String,
        field: String = "file",
        fields: [(name: String, value: String)] = [],
        gzipLevel: Int? = nil,
        options: BatchOptions = BatchOptions(concurrency: 4)
    ) async throws -> FileUploadOutcome {
        let requests = files.map { file -> Request<Data> in
            do {
                var form = MultipartFormData()
                try form.append(file: file, name: field, gzipLevel: gzipLevel)
                for (name, value) in fields { try form.append(field: name, value: value) }
                return Request<Data>.post(path, body: try form.body())
            } catch {
                // The file cannot be sent: the request fails with this error when the batch runs it.
                return Request<Data>.post(path, body: .failing(error))
            }
        }
        return FileUploadOutcome(files: files, batch: try await run(Batch(requests, options: options)))
    }
}

extension RequestBody {
    /// A body whose preparation throws `error`, so a request that could not be built fails in its own slot.
    static func failing(_ error: any Error) -> RequestBody {
        RequestBody(storage: .encoded { throw error }, contentType: nil)
    }
}
