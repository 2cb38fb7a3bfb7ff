import Foundation

/// One input from libFuzzer or a corpus file, with the ways targets cut it into the values they need.
struct FuzzInput {
    let bytes: [UInt8]

    /// The whole input.
    var data: Data { Data(bytes) }

    /// The whole input as text (invalid UTF-8 replaced, as any `String` from the network would be).
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// The input cut at each 0x00 into at least `count` strings (missing ones are empty, extra NULs stay in the
    /// last): how a target gets a name and a value from one input.
    func strings(_ count: Int) -> [String] {
        var pieces = bytes.split(separator: 0, maxSplits: count - 1, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        while pieces.count < count { pieces.append("") }
        return pieces
    }
}
