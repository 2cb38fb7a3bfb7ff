public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Changes a request before it is sent: rewrite its URL, add parameters or headers, sign it.
///
/// Adapters run in order, after the URL is built and defaults are applied, and before validation of the
/// headers, so nothing an adapter adds can smuggle CR or LF onto the wire.
public protocol RequestAdapter: Sendable {
    /// Returns the request to send, or throws to fail it before anything leaves.
    func adapt(_ request: PreparedRequest) async throws -> PreparedRequest
}

/// An adapter made from a closure.
public struct ClosureAdapter: RequestAdapter {
    private let body: @Sendable (PreparedRequest) async throws -> PreparedRequest
    /// Creates an adapter that runs `body`.
    public init(_ body: @escaping @Sendable (PreparedRequest) async throws -> PreparedRequest) { self.body = body }
    /// Returns the adapted request.
    public func adapt(_ request: PreparedRequest) async throws -> PreparedRequest { try await body(request) }
}

/// Rewrites each request's URL (RBEFireworks' URL filters, API versioning schemes of your own).
public struct URLRewriteAdapter: RequestAdapter {
    private let rewrite: @Sendable (URL) throws -> URL
    /// Creates an adapter that maps every URL through `rewrite`.
    public init(_ rewrite: @escaping @Sendable (URL) throws -> URL) { self.rewrite = rewrite }
    /// Returns the adapted request.
    public func adapt(_ request: PreparedRequest) async throws -> PreparedRequest {
        var request = request
        request.url = try rewrite(request.url)
        return request
    }
}

/// Appends query parameters to every request (a device type, an app version).
public struct QueryParametersAdapter: RequestAdapter {
    /// The parameters added; a request's own value of the same name wins.
    public var parameters: Parameters
    /// Creates an adapter adding `parameters`.
    public init(_ parameters: Parameters) { self.parameters = parameters }
    /// Returns the adapted request.
    public func adapt(_ request: PreparedRequest) async throws -> PreparedRequest {
        var request = request
        request.url = URLBuilder.appending(parameters, to: request.url, overwrite: false)
        return request
    }
}

/// Sets headers on every request; the value closure is asked each time, so a token can change.
public struct HeaderAdapter: RequestAdapter {
    private let name: HTTPField.Name
    private let value: @Sendable () async throws -> String?
    /// Sets `name` to whatever `value` returns (nothing when it returns `nil`), unless the request has it already.
    public init(_ name: HTTPField.Name, value: @escaping @Sendable () async throws -> String?) {
        self.name = name
        self.value = value
    }
    /// Returns the adapted request; throws ``CourierError/Code/invalidHeader`` when the value holds a control
    /// character (CR, LF, NUL…), which `HTTPFields` would otherwise turn into spaces without a word.
    public func adapt(_ request: PreparedRequest) async throws -> PreparedRequest {
        guard request.headers[name] == nil, let value = try await value() else { return request }
        try HeaderValidation.check(value: value, name: name.rawName)
        var request = request
        request.headers[name] = value
        return request
    }
}

extension RequestAdapter where Self == ClosureAdapter {
    /// An adapter from a closure.
    public static func adapt(
        _ body: @escaping @Sendable (PreparedRequest) async throws -> PreparedRequest
    ) -> ClosureAdapter {
        ClosureAdapter(body)
    }
}

extension RequestAdapter where Self == URLRewriteAdapter {
    /// Rewrites every URL.
    public static func rewriteURL(_ rewrite: @escaping @Sendable (URL) throws -> URL) -> URLRewriteAdapter {
        URLRewriteAdapter(rewrite)
    }
}

extension RequestAdapter where Self == QueryParametersAdapter {
    /// Appends query parameters.
    public static func queryParameters(_ parameters: Parameters) -> QueryParametersAdapter {
        QueryParametersAdapter(parameters)
    }
}

extension RequestAdapter where Self == HeaderAdapter {
    /// Sets a header from a closure asked on every request (a bearer token that refreshes, say).
    public static func header(
        _ name: HTTPField.Name,
        value: @escaping @Sendable () async throws -> String?
    ) -> HeaderAdapter {
        HeaderAdapter(name, value: value)
    }
}
