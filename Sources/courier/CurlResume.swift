import Courier
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// curl's `-C -`: the `-o` file's size is where the transfer goes on from. The request asks for the rest
/// (`Range: bytes=SIZE-`) and a `206` whose range starts there is appended; a `416` means the file is whole already
/// and nothing is written; an answer with the whole body (`200`), or another range, is refused (exit 33) and the
/// file is left as it was. A missing or empty file is fetched whole, as without `-C`.
struct CurlResume {
    let path: String
    /// The bytes already in the file.
    let offset: Int64

    init(path: String) {
        self.path = path
        offset = FileChunks.readableSize(of: URL(filePath: path)) ?? 0
    }

    /// The `Range` to ask for; `nil` when there is nothing to go on from.
    var range: String? { offset > 0 ? "bytes=\(offset)-" : nil }

    /// Where the body goes: appended to the file, or through a temporary file as a fresh `-o` when it is empty.
    func destination() throws -> BodyDestination {
        offset > 0 ? try .appending(to: path) : try .file(path)
    }

    /// Whether the answer's body continues the file; `false` for one to drop (a `416`: the file is whole; an error
    /// status, whose page must not be appended to a file). Throws ``ResumeRefused`` for a whole body or a range
    /// that starts elsewhere.
    func continues(with head: ResponseHeadText) throws -> Bool {
        guard offset > 0 else { return true }
        switch head.status.code {
        case 206:
            let range = head.headers[.contentRange] ?? ""
            guard range.hasPrefix("bytes \(offset)-") else {
                throw ResumeRefused(
                    description: "the server sent another range (\(range.prefix(60))), not the rest from byte \(offset)"
                )
            }
            return true
        case 200..<300:
            throw ResumeRefused(
                description: "the server does not resume: it sent the whole body (\(path) is unchanged)"
            )
        default:
            return false
        }
    }
}
