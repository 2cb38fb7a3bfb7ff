/// Byte counts for people, in binary (IEC) units with one decimal: the same powers of 1024 that sizes and rates
/// are read in (`--limit-rate 500K`, `target:2M`), so what goes in comes out under the same name.
public enum ByteCount {
    /// `13_002_342` → `"12.4 MiB"`; below 1024, `"512 B"`.
    public static func format<Bytes: BinaryInteger>(_ bytes: Bytes) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
        var value = Double(bytes)
        var unit = 0
        while abs(value) >= 1023.95, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        let tenths = (value * 10).rounded()
        return "\(Int(tenths) / 10).\(abs(Int(tenths)) % 10) \(units[unit])"
    }
}
