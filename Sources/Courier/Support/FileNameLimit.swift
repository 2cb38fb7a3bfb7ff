import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The 255-byte limit on one file name (`NAME_MAX` on Linux, macOS and the common filesystems), and a short
/// stand-in for a name whose side files would pass it.
enum FileNameLimit {
    /// The longest file name, in bytes.
    static let maximumBytes = 255

    /// `name`, or when `name` followed by `suffixBytes` more would pass the limit, `.courier-` and 32 hex digits of
    /// its SHA-256: a fixed-length name that belongs to `name` alone, so every side file of any name the
    /// filesystem takes fits too.
    static func base(for name: String, suffixBytes: Int) -> String {
        guard name.utf8.count + suffixBytes > maximumBytes else { return name }
        return ".courier-" + Hex.string(SHA256.hash(data: Data(name.utf8))).prefix(32)
    }
}
