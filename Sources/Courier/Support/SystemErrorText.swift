#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What went wrong in a file system call, in the system's words: `No such file or directory` for a `CocoaError`
/// whose cause is `ENOENT`. FoundationEssentials has no `localizedDescription`, and a `CocoaError` printed as it is
/// shows its whole user info.
package enum SystemErrorText {
    /// The error's cause as the C library names it, or the error as Swift prints it when it has no POSIX cause.
    package static func describe(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return text(of: posix.code.rawValue) }
        if let cocoa = error as? CocoaError, let posix = cocoa.underlying as? POSIXError {
            return text(of: posix.code.rawValue)
        }
        return "\(error)"
    }

    /// `strerror`'s text for `code`.
    package static func text(of code: Int32) -> String { String(cString: strerror(code)) }
}
