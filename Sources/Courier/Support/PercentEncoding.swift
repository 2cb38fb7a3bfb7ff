/// Percent-encoding of UTF-8 text (RFC 3986 §2.1), done here because FoundationEssentials, which Courier builds
/// on, has neither `CharacterSet` nor `addingPercentEncoding`/`removingPercentEncoding`.
package enum PercentEncoding {
    private static let digits = Array("0123456789ABCDEF".utf8)

    /// `text` with every UTF-8 byte for which `keep` is false written as `%XX` (upper-case hex, as Foundation
    /// writes it).
    package static func encode(_ text: some StringProtocol, keeping keep: (UInt8) -> Bool) -> String {
        guard text.utf8.contains(where: { !keep($0) }) else { return String(text) }
        return encode(bytes: text.utf8, keeping: keep)
    }

    /// `bytes` as text, every byte for which `keep` is false written as `%XX`; with `spaceAsPlus`, a space as `+`
    /// (the form encoding of HTML and curl's `--data-urlencode`).
    package static func encode(
        bytes: some Collection<UInt8>,
        keeping keep: (UInt8) -> Bool,
        spaceAsPlus: Bool = false
    ) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count + 16)
        for byte in bytes {
            if keep(byte) {
                out.append(byte)
            } else if spaceAsPlus, byte == UInt8(ascii: " ") {
                out.append(UInt8(ascii: "+"))
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0x0f)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` with each `%XX` turned back into its byte; `nil` when a `%` is not followed by two hex digits or
    /// the bytes are not UTF-8 (what Foundation's `removingPercentEncoding` answers for those).
    package static func decode(_ text: some StringProtocol) -> String? {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        var bytes = text.utf8.makeIterator()
        while let byte = bytes.next() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard let high = bytes.next().flatMap(hexValue), let low = bytes.next().flatMap(hexValue) else {
                return nil
            }
            out.append(high << 4 | low)
        }
        return String(validating: out, as: UTF8.self)
    }

    /// RFC 3986's unreserved characters: ASCII letters, digits and `-._~`.
    package static func isUnreserved(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "~")
    }

    /// An ASCII letter or digit.
    package static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    /// What a URL path may hold unescaped (RFC 3986's `pchar` and `/`: Foundation's `urlPathAllowed`).
    package static func isPathAllowed(_ byte: UInt8) -> Bool {
        isUnreserved(byte) || "!$&'()*+,;=:@/".utf8.contains(byte)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
