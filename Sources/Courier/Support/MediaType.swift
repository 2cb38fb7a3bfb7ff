#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Media types as headers carry them.
package enum MediaType {
    /// The type and subtype of a `Content-Type` or `Accept` item, its parameters left off, trimmed and lowercased:
    /// `Text/Event-Stream; charset=utf-8` is `text/event-stream`.
    package static func essence(of value: some StringProtocol) -> String {
        (value.split(separator: ";", maxSplits: 1).first ?? "").trimmingSpaces().lowercased()
    }
}
