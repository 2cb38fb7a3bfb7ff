import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CommandLineInput {
    /// A reachability target: `HOST`, `HOST:PORT`, `[IPv6]:PORT`, or a URL (its port, else 80 or 443 by scheme).
    static func reachabilityTarget(_ text: String) throws -> (host: String, port: Int) {
        let trimmed = text.trimmingSpaces()
        func invalid() -> CourierError {
            CourierError(
                code: .invalidParameter,
                message: "\"\(CourierError.printable(text))\" is not HOST[:PORT] or a URL"
            )
        }
        if trimmed.contains("://") {
            guard let url = URL(string: trimmed), url.host() != nil else { throw invalid() }
            return ReachabilityMonitor.endpoint(of: url)
        }
        guard let url = URL(string: "tcp://" + trimmed), let host = url.host(percentEncoded: false), !host.isEmpty,
            url.path().isEmpty, url.query == nil, url.user == nil
        else { throw invalid() }
        let port = url.port ?? 80
        guard (1...65_535).contains(port) else { throw invalid() }
        return (host, port)
    }
}
