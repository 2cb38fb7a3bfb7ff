import Courier

/// Lower-case hex of a digest, the form every SHA-256 the test server reports takes.
func hex<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
    Hex.string(bytes)
}
