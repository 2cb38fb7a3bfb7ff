import Courier
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Counts the redirects a command's requests followed, for `%{num_redirects}`.
final class RedirectCounter: EventMonitor {
    private let count = Locked(0)

    /// The redirects followed so far.
    var followed: Int { count.withLock { $0 } }

    func willRedirect(_ request: PreparedRequest, status: HTTPResponse.Status, to url: URL) {
        count.withLock { $0 += 1 }
    }
}
