import Courier
import Foundation
import HTTPTypes

/// The disk cache's decoder: any file is a whole entry or `Corrupt`, never a crash; a decoded entry survives
/// encode → decode → encode byte for byte; the header read alone agrees with the whole decode.
enum CacheEntryFuzz {
    static func run(_ input: FuzzInput) throws(InvariantViolation) {
        // The input as a file, and sealed behind a valid prefix and digest so the fuzzer reaches the header parser.
        for file in [input.data, CacheEntryCodec.sealed(covered: input.data)] {
            _ = try? CacheEntryCodec.headerEnd(file)
            let header = try? CacheEntryCodec.decodeHeader(file)
            guard let entry = try? CacheEntryCodec.decode(file) else { continue }
            try require(
                header?.bodyLength == entry.body.count && header?.key == entry.key && header?.headers == entry.headers,
                "the header read alone disagrees with the whole entry"
            )
            let once = CacheEntryCodec.encode(entry, compression: .none).file
            let twice = (try? CacheEntryCodec.decode(once)).map { CacheEntryCodec.encode($0, compression: .none).file }
            try require(twice == once, "a decoded entry does not survive encode → decode → encode")
        }
    }
}
