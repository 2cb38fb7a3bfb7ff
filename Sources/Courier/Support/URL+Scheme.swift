#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension URL {
    /// Whether the scheme is `https`, in any case, compared in place.
    var isHTTPS: Bool {
        scheme?.equalsASCIICaseInsensitive("https") ?? false
    }

    /// The port a request to this URL connects to: its own, else 443 for `https` and 80 otherwise.
    var effectivePort: Int {
        port ?? (isHTTPS ? 443 : 80)
    }
}
