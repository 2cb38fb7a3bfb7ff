import Foundation

extension URL {
    /// Whether the scheme is `https`, in any case, compared in place.
    var isHTTPS: Bool {
        scheme?.equalsASCIICaseInsensitive("https") ?? false
    }
}
