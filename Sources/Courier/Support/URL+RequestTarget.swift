#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension URL {
    /// The path and query as they go on the request line (`/a/b?c=d`), percent-encoded; `/` for an empty path.
    var requestTarget: String {
        let path = path(percentEncoded: true)
        return (path.isEmpty ? "/" : path) + (query(percentEncoded: true).map { "?" + $0 } ?? "")
    }

    /// `host[:port]` as the `Host` field carries it; `nil` without a host.
    var authorityText: String? {
        guard let host = host(percentEncoded: true) else { return nil }
        let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return port.map { "\(shownHost):\($0)" } ?? shownHost
    }

    /// The URL with another request target (path and query); `nil` when the result does not parse.
    func replacingRequestTarget(_ target: String) -> URL? {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: true) else { return nil }
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        components.percentEncodedPath = String(parts.first ?? "")
        components.percentEncodedQuery = parts.count > 1 ? String(parts[1]) : nil
        return components.url
    }
}
