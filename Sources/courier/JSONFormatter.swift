/// Re-indents JSON as it streams past, chunk by chunk, keeping its keys in their order (as xh shows it): each
/// member on a line of its own, two spaces per level, a space after each colon, and with colours keys, strings,
/// numbers and literals told apart. It only moves whitespace and adds colour codes, so text that is not JSON
/// comes out with its characters unchanged.
///
/// Past ``maxIndentedDepth`` levels it prints compactly, as jq and xh do, so the output grows in step with the
/// input however deep a hostile body nests (indenting every level would grow with the square of the depth); and
/// it hands its output on in pieces of at most 64 KiB as it goes.
struct JSONFormatter {
    /// ANSI colours, or none.
    let colours: Bool
    /// The deepest level that gets lines and indentation of its own.
    static let maxIndentedDepth = 32
    /// The most output held before it is handed on.
    static let outputPieceBytes = 64 * 1024

    private enum Container { case object, array }
    private var stack: [Container] = []
    private var inString = false
    private var escaped = false
    /// Whether the string being read is an object's key.
    private var stringIsKey = false
    /// Whether a scalar (number, `true`, …) is being read, so its colour is open.
    private var inScalar = false
    /// An opening bracket just written: its closing one follows on the same line when nothing comes between.
    private var justOpened = false
    /// The next string in the current object is a key.
    private var expectsKey = false

    init(colours: Bool) { self.colours = colours }

    private static let keyColour = Array("\u{1B}[34m".utf8), stringColour = Array("\u{1B}[33m".utf8)
    private static let scalarColour = Array("\u{1B}[36m".utf8), reset = Array("\u{1B}[0m".utf8)

    /// Formats the next chunk of input, handing the text to `write` in pieces of at most about 64 KiB.
    mutating func format(_ input: some Sequence<UInt8>, write: ([UInt8]) throws -> Void) rethrows {
        var output: [UInt8] = []
        output.reserveCapacity(Self.outputPieceBytes + 256)
        for byte in input {
            format(byte, into: &output)
            if output.count >= Self.outputPieceBytes {
                try write(output)
                output.removeAll(keepingCapacity: true)
            }
        }
        if !output.isEmpty { try write(output) }
    }

    /// The formatted text of the next chunk of input, all at once (for tests and small inputs).
    mutating func format(_ input: some Sequence<UInt8>) -> [UInt8] {
        var whole: [UInt8] = []
        format(input) { whole += $0 }
        return whole
    }

    /// The end of the input: closes an open colour and ends the last line.
    mutating func finish() -> [UInt8] {
        var output: [UInt8] = []
        endScalar(&output)
        output.append(UInt8(ascii: "\n"))
        return output
    }

    private mutating func format(_ byte: UInt8, into output: inout [UInt8]) {
        if inString {
            output.append(byte)
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
                if colours { output += Self.reset }
            }
            return
        }
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
            endScalar(&output)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            endScalar(&output)
            openLine(&output)
            output.append(byte)
            stack.append(byte == UInt8(ascii: "{") ? .object : .array)
            expectsKey = byte == UInt8(ascii: "{")
            justOpened = true
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            endScalar(&output)
            if !stack.isEmpty { stack.removeLast() }
            if !justOpened { newline(&output) }
            justOpened = false
            output.append(byte)
        case UInt8(ascii: ","):
            endScalar(&output)
            output.append(byte)
            expectsKey = stack.last == .object
            newline(&output)
        case UInt8(ascii: ":"):
            endScalar(&output)
            output.append(byte)
            if stack.count <= Self.maxIndentedDepth { output.append(UInt8(ascii: " ")) }
        case UInt8(ascii: "\""):
            endScalar(&output)
            openLine(&output)
            inString = true
            stringIsKey = expectsKey
            expectsKey = false
            if colours { output += stringIsKey ? Self.keyColour : Self.stringColour }
            output.append(byte)
        default:
            if !inScalar {
                openLine(&output)
                inScalar = true
                if colours { output += Self.scalarColour }
            }
            output.append(byte)
        }
    }

    /// Starts the first member of a container on a line of its own.
    private mutating func openLine(_ output: inout [UInt8]) {
        if justOpened {
            justOpened = false
            newline(&output)
        }
    }

    private mutating func endScalar(_ output: inout [UInt8]) {
        guard inScalar else { return }
        inScalar = false
        if colours { output += Self.reset }
    }

    /// A new line at the current depth; nothing past ``maxIndentedDepth``, where the text stays compact.
    private func newline(_ output: inout [UInt8]) {
        guard stack.count <= Self.maxIndentedDepth else { return }
        output.append(UInt8(ascii: "\n"))
        output += repeatElement(UInt8(ascii: " "), count: 2 * stack.count)
    }
}
