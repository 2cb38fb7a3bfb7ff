public import Foundation
public import HTTPTypes

/// A typed request: everything needed to build an HTTP request, plus how to turn the answer into `Response`.
///
/// Build one with the static factories and adjust it with the modifiers; group endpoint definitions as
/// static members, the way HLNetworking's API center grouped them:
///
/// ```swift
/// extension Request where Response == User {
///     static func user(id: Int) -> Self { .get("/users/\(id)") }
/// }
/// let user = try await session.send(.user(id: 42)).value
/// ```
public struct Request<Response: Sendable>: Sendable {
    /// The HTTP method.
    public var method: HTTPRequest.Method
    /// A path relative to the base URL (`/users/1`), or an absolute URL that overrides every base.
    public var path: String
    /// Query items, always appended to the URL whatever the method.
    public var query: Parameters
    /// Parameters placed by method: in the query for GET, HEAD and DELETE, in the body for the rest.
    public var parameters: Parameters
    /// Headers; they win over the session's default headers.
    ///
    /// swift-http-types replaces CR, LF and NUL in a value given as `HTTPFields` with spaces when the field is
    /// made, so Courier never sees them; ``header(_:_:)`` takes strings and refuses such a value with
    /// ``CourierError/Code/invalidHeader`` before anything is sent.
    public var headers: HTTPFields
    /// Headers given as plain strings, validated (no CR, LF or NUL) before anything is sent.
    public var rawHeaders: [(name: String, value: String)]
    /// The body. When it is empty and the method carries a body, ``parameters`` are encoded instead.
    public var body: RequestBody
    /// Overrides the session's parameter encoding (form or JSON) for ``parameters`` in the body.
    public var parameterEncoding: ParameterEncoding?
    /// A base URL for this request only; wins over ``service`` and the session's base URL.
    public var baseURL: URL?
    /// A named service registered in ``Configuration/services``.
    public var service: ServiceID?
    /// Use the session's CDN base URL instead of its base URL.
    public var usesCDN: Bool
    /// Skip every base URL: ``path`` must then be absolute.
    public var ignoresBaseURL: Bool
    /// Overrides the API version segment (`v2`); an empty string removes it for this request.
    public var apiVersion: String?
    /// Include the session's default parameters (default `true`).
    public var includesDefaultParameters: Bool
    /// Include the session's default headers (default `true`).
    public var includesDefaultHeaders: Bool
    /// Per-request timeouts; unset fields fall back to the session's.
    public var timeouts: TimeoutOverrides
    /// Overrides the session's retry policy.
    public var retryPolicy: RetryPolicy?
    /// Validators run after the session's own.
    public var validators: [any ResponseValidator]
    /// Overrides the session's response size limit, in bytes.
    public var maxResponseBytes: Int?
    /// A free label, used to find or cancel requests by group.
    public var tag: String?
    /// Anything the caller wants to carry along, visible to adapters and monitors.
    public var userInfo: [String: any Sendable]
    /// When `true` the request is sent as built: no base URL, API version, default parameters, default headers
    /// or adapters (RBEFireworks' custom request). Validation, redirects and limits still apply.
    public var isRaw: Bool
    /// When the request starts compared with others waiting in the ``RequestPool`` (default `.normal`).
    public var priority: RequestPriority
    /// Whether the request may share the call of an identical one in flight (default `true`; see
    /// ``SchedulingOptions/coalescesRequests``).
    public var coalesces: Bool
    /// Overrides ``Configuration/cachePolicy`` for this request.
    public var cachePolicy: CachePolicy?
    /// Whether the session's ``Configuration/validators`` judge this response (default `true`); the request's own
    /// ``validators`` always do. Off for callers that read every status themselves, such as an OpenAPI client.
    public var usesSessionValidators: Bool
    /// Overrides ``Configuration/cookieHandling`` for this request: `[]` keeps the session's cookie jar out of it
    /// both ways, `.send` sends the jar's cookies without storing what the answer sets, `.store` the reverse.
    public var cookieHandling: CookieHandling?
    /// Plugins told when this request starts and stops (see ``RequestAccessory``).
    public var accessories: [any RequestAccessory]

    /// What the request does with the cookie jar under `configuration`: its own ``cookieHandling``, else the
    /// session's.
    func cookieHandling(under configuration: Configuration) -> CookieHandling {
        cookieHandling ?? configuration.cookieHandling
    }

    let decode: @Sendable (ResponseBody) throws -> Response

    /// Creates a request with a custom decoding of the body.
    public init(
        method: HTTPRequest.Method = .get,
        path: String,
        query: Parameters = [:],
        parameters: Parameters = [:],
        headers: HTTPFields = [:],
        body: RequestBody = .empty,
        decode: @escaping @Sendable (ResponseBody) throws -> Response
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.parameters = parameters
        self.headers = headers
        self.rawHeaders = []
        self.body = body
        self.parameterEncoding = nil
        self.baseURL = nil
        self.service = nil
        self.usesCDN = false
        self.ignoresBaseURL = false
        self.apiVersion = nil
        self.includesDefaultParameters = true
        self.includesDefaultHeaders = true
        self.timeouts = TimeoutOverrides()
        self.retryPolicy = nil
        self.validators = []
        self.maxResponseBytes = nil
        self.tag = nil
        self.userInfo = [:]
        self.isRaw = false
        self.priority = .normal
        self.coalesces = true
        self.cachePolicy = nil
        self.usesSessionValidators = true
        self.cookieHandling = nil
        self.accessories = []
        self.decode = decode
    }

    /// The same request with its result transformed.
    public func map<T: Sendable>(_ transform: @escaping @Sendable (Response) throws -> T) -> Request<T> {
        let decode = self.decode
        var mapped = Request<T>(method: method, path: path) { try transform(try decode($0)) }
        mapped.copySettings(from: self)
        return mapped
    }

    /// The same request decoding its body as `T` instead (raw bytes for `Data`, text for `String`, JSON otherwise).
    public func decoding<T: Decodable & Sendable>(_ type: T.Type = T.self, using decoder: JSONDecoder = JSONDecoder()) -> Request<T> {
        var mapped = Request<T>(method: method, path: path, decode: ResponseBody.decoder(for: T.self, using: decoder))
        mapped.copySettings(from: self)
        return mapped
    }

    private mutating func copySettings<Other>(from other: Request<Other>) {
        query = other.query
        parameters = other.parameters
        headers = other.headers
        rawHeaders = other.rawHeaders
        body = other.body
        parameterEncoding = other.parameterEncoding
        baseURL = other.baseURL
        service = other.service
        usesCDN = other.usesCDN
        ignoresBaseURL = other.ignoresBaseURL
        apiVersion = other.apiVersion
        includesDefaultParameters = other.includesDefaultParameters
        includesDefaultHeaders = other.includesDefaultHeaders
        timeouts = other.timeouts
        retryPolicy = other.retryPolicy
        validators = other.validators
        maxResponseBytes = other.maxResponseBytes
        tag = other.tag
        userInfo = other.userInfo
        isRaw = other.isRaw
        priority = other.priority
        coalesces = other.coalesces
        cachePolicy = other.cachePolicy
        usesSessionValidators = other.usesSessionValidators
        cookieHandling = other.cookieHandling
        accessories = other.accessories
    }
}

extension Request where Response: Decodable {
    /// Creates a request whose body decodes as `Response`: raw bytes for `Data`, UTF-8 text for `String`,
    /// nothing for ``Empty``, JSON for every other `Decodable`.
    public init(
        method: HTTPRequest.Method = .get,
        path: String,
        query: Parameters = [:],
        parameters: Parameters = [:],
        headers: HTTPFields = [:],
        body: RequestBody = .empty,
        decoder: JSONDecoder = JSONDecoder()
    ) {
        self.init(method: method, path: path, query: query, parameters: parameters, headers: headers, body: body,
                  decode: ResponseBody.decoder(for: Response.self, using: decoder))
    }

    /// A GET request.
    public static func get(_ path: String, query: Parameters = [:], headers: HTTPFields = [:]) -> Self {
        Self(method: .get, path: path, query: query, headers: headers)
    }

    /// A HEAD request.
    public static func head(_ path: String, query: Parameters = [:], headers: HTTPFields = [:]) -> Self {
        Self(method: .head, path: path, query: query, headers: headers)
    }

    /// A DELETE request.
    public static func delete(_ path: String, query: Parameters = [:], headers: HTTPFields = [:]) -> Self {
        Self(method: .delete, path: path, query: query, headers: headers)
    }

    /// An OPTIONS request.
    public static func options(_ path: String, query: Parameters = [:], headers: HTTPFields = [:]) -> Self {
        Self(method: .options, path: path, query: query, headers: headers)
    }

    /// A POST request with a body (``RequestBody/json(_:encoder:)``, ``RequestBody/form(_:)``, …).
    public static func post(_ path: String, body: RequestBody = .empty, parameters: Parameters = [:], headers: HTTPFields = [:]) -> Self {
        Self(method: .post, path: path, parameters: parameters, headers: headers, body: body)
    }

    /// A PUT request with a body.
    public static func put(_ path: String, body: RequestBody = .empty, parameters: Parameters = [:], headers: HTTPFields = [:]) -> Self {
        Self(method: .put, path: path, parameters: parameters, headers: headers, body: body)
    }

    /// A PATCH request with a body.
    public static func patch(_ path: String, body: RequestBody = .empty, parameters: Parameters = [:], headers: HTTPFields = [:]) -> Self {
        Self(method: .patch, path: path, parameters: parameters, headers: headers, body: body)
    }
}

/// The body type for requests whose answer carries nothing of interest.
public struct Empty: Codable, Sendable, Hashable {
    /// Creates the empty value.
    public init() {}
}
