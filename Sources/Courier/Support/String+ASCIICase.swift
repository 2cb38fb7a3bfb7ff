extension String {
    /// Whether this string equals `lowercase` (which must be lowercase ASCII) ignoring ASCII case, compared byte by
    /// byte in place: for header names, which HTTP compares without case. Strings of another length, nearly
    /// every name compared, are told apart by their lengths alone.
    func equalsASCIICaseInsensitive(_ lowercase: StaticString) -> Bool {
        guard utf8.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        var index = 0
        for byte in utf8 {
            let folded = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            guard folded == expected[index] else { return false }
            index += 1
        }
        return true
    }
}
