extension String {
    /// The longest start of the text that takes at most `bytes` bytes of UTF-8 and ends at a character: what fits
    /// where a protocol counts bytes (a WebSocket close reason, a message kept for the monitors).
    package func prefix(utf8Bytes bytes: Int) -> String {
        guard utf8.count > bytes else { return self }
        var end = utf8.index(utf8.startIndex, offsetBy: max(0, bytes))
        while end.samePosition(in: self) == nil { end = utf8.index(before: end) }
        return String(self[..<end])
    }
}
