public import Foundation
import HTTPTypes

extension Request {
    /// Adds a header given as strings; a name or value that could split the request is rejected before sending.
    public func header(_ name: String, _ value: String) -> Self {
        var copy = self
        copy.rawHeaders.append((name, value))
        return copy
    }

    /// Adds query items.
    public func query(_ items: Parameters) -> Self {
        var copy = self
        copy.query.merge(items) { _, new in new }
        return copy
    }

    /// Sends the request to a named service.
    public func service(_ id: ServiceID) -> Self {
        var copy = self
        copy.service = id
        return copy
    }

    /// Sends the request to this base URL.
    public func baseURL(_ url: URL) -> Self {
        var copy = self
        copy.baseURL = url
        return copy
    }

    /// Sets the tag.
    public func tag(_ tag: String) -> Self {
        var copy = self
        copy.tag = tag
        return copy
    }

    /// Sets the total timeout of this request.
    public func timeout(_ total: Duration) -> Self {
        var copy = self
        copy.timeouts.total = total
        return copy
    }

    /// Sets the retry policy of this request.
    public func retry(_ policy: RetryPolicy) -> Self {
        var copy = self
        copy.retryPolicy = policy
        return copy
    }

    /// Adds a validator run after the session's.
    public func validate(_ validator: any ResponseValidator) -> Self {
        var copy = self
        copy.validators.append(validator)
        return copy
    }

    /// Marks the request raw: sent exactly as built (see ``isRaw``).
    public func raw() -> Self {
        var copy = self
        copy.isRaw = true
        return copy
    }
}
