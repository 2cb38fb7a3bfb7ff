import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

extension Request {
    /// A copy with `change` applied: the one shape every modifier has.
    private func with(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }

    /// Adds a header given as strings; a name or value that could split the request is rejected before sending.
    public func header(_ name: String, _ value: String) -> Self {
        with { $0.rawHeaders.append((name, value)) }
    }

    /// Sets `Authorization: Basic …` for `user` and `password` (RFC 7617, UTF-8), replacing any earlier value.
    /// Logs, error previews and cURL exports show it redacted. Throws ``CourierError/Code/invalidHeader`` when
    /// `user` holds a colon (the scheme cannot carry one) or either holds a control character.
    public func basicAuth(user: String, password: String) throws -> Self {
        guard !user.contains(":") else {
            throw CourierError.invalidHeader(
                name: "Authorization",
                reason: "cannot carry a Basic user name that holds ':'"
            )
        }
        if HeaderValidation.controlCharacter(in: user + password) != nil {
            throw CourierError.invalidHeader(
                name: "Authorization",
                reason: "cannot carry a Basic user name or password with a control character"
            )
        }
        let credentials = Data("\(user):\(password)".utf8).base64EncodedString()
        return with { request in
            request.rawHeaders.removeAll { $0.name.lowercased() == "authorization" }
            request.headers[.authorization] = nil
            request.rawHeaders.append(("Authorization", "Basic " + credentials))
        }
    }

    /// Adds query items.
    public func query(_ items: Parameters) -> Self {
        with { $0.query.merge(items) { _, new in new } }
    }

    /// Sends the request to a named service.
    public func service(_ id: ServiceID) -> Self {
        with { $0.service = id }
    }

    /// Sends the request to this base URL.
    public func baseURL(_ url: URL) -> Self {
        with { $0.baseURL = url }
    }

    /// Sets the tag.
    public func tag(_ tag: String) -> Self {
        with { $0.tag = tag }
    }

    /// Sets the total timeout of this request.
    public func timeout(_ total: Duration) -> Self {
        with { $0.timeouts.total = total }
    }

    /// Adds a ``ResponseInterceptor`` that runs after the session's, for this request only.
    public func intercepting(_ interceptor: some ResponseInterceptor) -> Self {
        with { $0.interceptors.append(interceptor) }
    }

    /// Signs this request with `authentication` instead of the session's; `nil` sends it without any.
    ///
    /// ```swift
    /// let health = try await session.send(Request<Data>.get("/health").authentication(nil))
    /// ```
    public func authentication(_ authentication: Authentication?) -> Self {
        with { $0.authentication = .own(authentication) }
    }

    /// Sets the retry rule of this request (``RetryPolicy``, or a ``RequestRetrier`` of your own).
    public func retry(_ policy: some RequestRetrier) -> Self {
        with { $0.retryPolicy = policy }
    }

    /// Adds a validator run after the session's.
    public func validate(_ validator: any ResponseValidator) -> Self {
        with { $0.validators.append(validator) }
    }

    /// Leaves the session's validators out for this request (see ``usesSessionValidators``).
    public func withoutSessionValidators() -> Self {
        with { $0.usesSessionValidators = false }
    }

    /// The same request without the session's credentials: no header a cross-origin redirect would strip
    /// (`Authorization`, `Cookie`, `Proxy-Authorization` by default) and no authenticator, for a request that goes
    /// to another origin than the one those credentials are for (a resumable upload's `Location` elsewhere).
    package func withoutCredentials() -> Self {
        with {
            $0.leavesCredentialsOut = true
            $0.authentication = .own(nil)
        }
    }

    /// Marks the request raw: sent exactly as built (see ``isRaw``).
    public func raw() -> Self {
        with { $0.isRaw = true }
    }

    /// Sets the priority in the ``RequestPool``.
    public func priority(_ priority: RequestPriority) -> Self {
        with { $0.priority = priority }
    }

    /// What this request does with the session's cookie jar, instead of ``Configuration/cookieHandling``:
    /// `.cookies([])` sends none and stores none. A request that handles cookies otherwise than the session does
    /// makes its own call rather than share an identical one's.
    public func cookies(_ handling: CookieHandling) -> Self {
        with { $0.cookieHandling = handling }
    }

    /// Adds a plugin told when this request starts and stops (YTKNetwork's `addAccessory`); accessories are told
    /// in the order they were added.
    public func accessory(_ accessory: any RequestAccessory) -> Self {
        with { $0.accessories.append(accessory) }
    }

    /// Makes the request its own call even when an identical one is in flight.
    public func withoutCoalescing() -> Self {
        with { $0.coalesces = false }
    }

    /// The same request with its own cache policy (see ``CachePolicy``).
    public func cachePolicy(_ policy: CachePolicy) -> Self {
        with { $0.cachePolicy = policy }
    }
}
