import Foundation

extension URL {
    /// Whether the scheme is `https`, in any case. Asked several times per request, so the usual spelling is
    /// matched without lowercasing.
    var isHTTPS: Bool {
        guard let scheme else { return false }
        return scheme == "https" || (scheme.count == 5 && scheme.lowercased() == "https")
    }
}
