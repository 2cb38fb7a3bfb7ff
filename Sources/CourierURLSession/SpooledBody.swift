import Courier
import Foundation
import NIOCore

/// A stream body written to a temporary file before `URLSession` sends it from there, so memory holds one chunk
/// whatever the body's length.
///
/// Why not feed URLSession an `InputStream` as the chunks arrive: FoundationNetworking reads a body stream on its
/// one work queue and takes "no bytes available" for the end of the body, so such a stream must block that queue
/// until the next chunk comes; URLSession's own calls (`dataTask`, `resume`, `cancel`) wait for the same queue
/// with `sync`, and once they occupy Swift's few cooperative threads, the task producing the chunks cannot run:
/// the transport tests deadlocked that way on 2 cores. A file is what URLSession reads without blocking.
struct SpooledBody: Sendable {
    /// The file, private to the process (mode 0600); ``remove()`` deletes it.
    let url: URL

    /// Writes `chunks` to a new temporary file.
    static func write(_ chunks: ByteStream) async throws -> SpooledBody {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600]),
            let handle = FileHandle(forWritingAtPath: url.path)
        else {
            throw CourierError(
                code: .fileAccess,
                message:
                    "cannot create a temporary file for the request body in \(url.deletingLastPathComponent().path)"
            )
        }
        let spooled = SpooledBody(url: url)
        defer { try? handle.close() }
        do {
            for try await chunk in chunks {
                do { try handle.write(contentsOf: chunk.readableBytesView) } catch {
                    throw CourierError(
                        code: .fileAccess,
                        message: "cannot write the request body to \(url.path): \(error.localizedDescription)",
                        underlying: error
                    )
                }
            }
        } catch {
            spooled.remove()
            throw CourierError.normalized(error)  // the stream's own error, as the other transport reports it
        }
        return spooled
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
