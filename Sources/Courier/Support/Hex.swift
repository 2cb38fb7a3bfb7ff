/// Lowercase hex, the form Courier writes every digest in (cache file names, signatures, checksums).
package enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// The bytes as lowercase hex, two characters each.
    package static func string<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
