/// `delta-seconds = 1*DIGIT` (RFC 9111 §1.2.2), the number in `max-age`, `Age` and `Retry-After`.
enum DeltaSeconds {
    /// The largest value a cache needs to tell apart: 2^31.
    static let limit = 2_147_483_648

    /// `nil` for anything but ASCII digits (a sign, a fraction, a space inside, `inf`); a value past 2^31,
    /// however long, is 2^31, so no sum made with it can overflow.
    static func parse<Text: StringProtocol>(_ text: Text) -> Int? {
        guard !text.isEmpty else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = min(limit, value * 10 + Int(byte - UInt8(ascii: "0")))
        }
        return value
    }
}
