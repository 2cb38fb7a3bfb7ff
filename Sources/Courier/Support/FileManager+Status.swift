#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What `stat(2)` says of a path, where `attributesOfItem` answers in types that differ with the Foundation loaded
/// (FoundationEssentials alone gives a size as `UInt`, Foundation as `NSNumber`).
extension FileManager {
    /// The size in bytes of what `path` names (following a symbolic link), `nil` when it cannot be read.
    package func sizeOfItem(atPath path: String) -> Int64? {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : nil
    }

    /// Whether `path` names an existing directory (following a symbolic link).
    package func isDirectory(atPath path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }
}
