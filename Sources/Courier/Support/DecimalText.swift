#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Decimal text of a `Double` by C's own `printf` conversions, without `String(format:)`, which FoundationEssentials
/// does not have. (C rounds the exact binary value: `2.675` is `2.67` to two places.)
extension Double {
    /// The value with `digits` decimals (`%.Nf`): `1.5.fixedText(3)` is `1.500`.
    package func fixedText(_ digits: Int) -> String { printed("f", digits) }

    /// The value to `digits` significant digits without trailing zeros (`%.Ng`): `12.345.significantText(3)` is
    /// `12.3`, `1234.5.significantText(3)` is `1.23e+03`.
    package func significantText(_ digits: Int) -> String { printed("g", digits) }

    private func printed(_ conversion: String, _ digits: Int) -> String {
        let format = "%.\(max(0, min(digits, 60)))\(conversion)"
        var buffer = [CChar](repeating: 0, count: 400)  // %f of 1e308 has 309 digits before the point
        let count = withVaList([self]) { arguments in
            buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, format, arguments) }
        }
        guard count >= 0, count < buffer.count else { return "\(self)" }
        return String(decoding: buffer[..<Int(count)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
