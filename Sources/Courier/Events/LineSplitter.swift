/// Splits a byte stream into lines at LF (a CR before it is dropped), chunk by chunk: the framing of JSON lines
/// (`application/jsonl`, NDJSON). A line longer than `maxLineBytes` throws ``CourierError/Code/bodyTooLarge``, so a
/// server that never sends a line feed cannot fill memory.
struct LineSplitter {
    private let maxLineBytes: Int
    private var line: [UInt8] = []

    init(maxLineBytes: Int) {
        self.maxLineBytes = max(1, maxLineBytes)
    }

    /// Appends the lines `bytes` completes to `lines`, without their line ends.
    mutating func split(_ bytes: some Collection<UInt8>, into lines: inout [[UInt8]]) throws(CourierError) {
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let end = bytes[index...].firstIndex(of: UInt8(ascii: "\n"))
            line.append(contentsOf: bytes[index..<(end ?? bytes.endIndex)])
            if line.count > maxLineBytes {
                throw CourierError(code: .bodyTooLarge, message: "a line of more than \(maxLineBytes) bytes")
            }
            guard let end else { return }
            lines.append(finishedLine())
            index = bytes.index(after: end)
        }
    }

    /// The stream ended: its last line, when it did not end with a line feed.
    mutating func finish() -> [UInt8]? {
        line.isEmpty ? nil : finishedLine()
    }

    private mutating func finishedLine() -> [UInt8] {
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        defer { line.removeAll(keepingCapacity: true) }
        return line
    }
}
