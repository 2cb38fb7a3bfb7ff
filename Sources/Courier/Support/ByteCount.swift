/// Byte counts for people: decimal units with one decimal, as `ls -h --si` and most file managers print them.
public enum ByteCount {
    /// `12_400_000` → `"12.4 MB"`; below 1000, `"512 B"`.
    public static func format<Bytes: BinaryInteger>(_ bytes: Bytes) -> String {
        let units = ["B", "kB", "MB", "GB", "TB", "PB"]
        var value = Double(bytes)
        var unit = 0
        while abs(value) >= 999.95, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        if unit == 0 { return "\(bytes) B" }
        let tenths = (value * 10).rounded()
        return "\(Int(tenths) / 10).\(abs(Int(tenths)) % 10) \(units[unit])"
    }
}
