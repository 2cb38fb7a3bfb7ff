public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

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
    /// Everything but the decoding, shared by copies of the request until one changes a field (see
    /// ``RequestStorage``).
    private var storage: RequestStorage

    /// Which storage the request reads now: requests that share one have the same.
    var storageIdentity: ObjectIdentifier { ObjectIdentifier(storage) }

    /// The storage, made this request's own first when another request shares it: what every setter writes to.
    private var writable: RequestStorage {
        mutating get {
            if !isKnownUniquelyReferenced(&storage) { storage = RequestStorage(copying: storage) }
            return storage
        }
    }

    /// The HTTP method.
    public var method: HTTPRequest.Method {
        get { storage.method }
        set { writable.method = newValue }
    }

    /// A path relative to the base URL (`/users/1`), or an absolute URL that overrides every base.
    public var path: String {
        get { storage.path }
        set { writable.path = newValue }
    }

    /// Query items, always appended to the URL whatever the method.
    public var query: Parameters {
        get { storage.query }
        set { writable.query = newValue }
    }

    /// Parameters placed by method: in the query for GET, HEAD and DELETE, in the body for the rest.
    public var parameters: Parameters {
        get { storage.parameters }
        set { writable.parameters = newValue }
    }

    /// Headers; they win over the session's default headers.
    ///
    /// swift-http-types replaces CR, LF and NUL in a value given as `HTTPFields` with spaces when the field is
    /// made, so Courier never sees them; ``header(_:_:)`` takes strings and refuses such a value with
    /// ``CourierError/Code/invalidHeader`` before anything is sent.
    public var headers: HTTPFields {
        get { storage.headers }
        set { writable.headers = newValue }
    }

    /// Headers given as plain strings, validated (no CR, LF or NUL) before anything is sent.
    public var rawHeaders: [(name: String, value: String)] {
        get { storage.rawHeaders }
        set { writable.rawHeaders = newValue }
    }

    /// The body. When it is empty and the method carries a body, ``parameters`` are encoded instead.
    public var body: RequestBody {
        get { storage.body }
        set { writable.body = newValue }
    }

    /// Overrides the session's parameter encoding (form or JSON) for ``parameters`` in the body.
    public var parameterEncoding: ParameterEncoding? {
        get { storage.parameterEncoding }
        set { writable.parameterEncoding = newValue }
    }

    /// A base URL for this request only; wins over ``service`` and the session's base URL.
    public var baseURL: URL? {
        get { storage.baseURL }
        set { writable.baseURL = newValue }
    }

    /// A named service registered in ``Configuration/services``.
    public var service: ServiceID? {
        get { storage.service }
        set { writable.service = newValue }
    }

    /// Use the session's CDN base URL instead of its base URL.
    public var usesCDN: Bool {
        get { storage.usesCDN }
        set { writable.usesCDN = newValue }
    }

    /// Skip every base URL: ``path`` must then be absolute.
    public var ignoresBaseURL: Bool {
        get { storage.ignoresBaseURL }
        set { writable.ignoresBaseURL = newValue }
    }

    /// Overrides the API version segment (`v2`); an empty string removes it for this request.
    public var apiVersion: String? {
        get { storage.apiVersion }
        set { writable.apiVersion = newValue }
    }

    /// Include the session's default parameters (default `true`).
    public var includesDefaultParameters: Bool {
        get { storage.includesDefaultParameters }
        set { writable.includesDefaultParameters = newValue }
    }

    /// Include the session's default headers (default `true`).
    public var includesDefaultHeaders: Bool {
        get { storage.includesDefaultHeaders }
        set { writable.includesDefaultHeaders = newValue }
    }

    /// Per-request timeouts; unset fields fall back to the session's.
    public var timeouts: TimeoutOverrides {
        get { storage.timeouts }
        set { writable.timeouts = newValue }
    }

    /// Overrides the session's retry rule.
    public var retryPolicy: (any RequestRetrier)? {
        get { storage.retryPolicy }
        set { writable.retryPolicy = newValue }
    }

    /// Validators run after the session's own.
    public var validators: [any ResponseValidator] {
        get { storage.validators }
        set { writable.validators = newValue }
    }

    /// Overrides the session's response size limit, in bytes.
    public var maxResponseBytes: Int? {
        get { storage.maxResponseBytes }
        set { writable.maxResponseBytes = newValue }
    }

    /// A free label, used to find or cancel requests by group.
    public var tag: String? {
        get { storage.tag }
        set { writable.tag = newValue }
    }

    /// Anything the caller wants to carry along, visible to adapters and monitors.
    public var userInfo: [String: any Sendable] {
        get { storage.userInfo }
        set { writable.userInfo = newValue }
    }

    /// When `true` the request is sent as built: no base URL, API version, default parameters, default headers
    /// or adapters (RBEFireworks' custom request). Validation, redirects and limits still apply.
    public var isRaw: Bool {
        get { storage.isRaw }
        set { writable.isRaw = newValue }
    }

    /// When the request starts compared with others waiting in the ``RequestPool`` (default `.normal`).
    public var priority: RequestPriority {
        get { storage.priority }
        set { writable.priority = newValue }
    }

    /// Whether the request may share the call of an identical one in flight (default `true`; see
    /// ``SchedulingOptions/coalescesRequests``).
    public var coalesces: Bool {
        get { storage.coalesces }
        set { writable.coalesces = newValue }
    }

    /// Overrides ``Configuration/cachePolicy`` for this request.
    public var cachePolicy: CachePolicy? {
        get { storage.cachePolicy }
        set { writable.cachePolicy = newValue }
    }

    /// Whether the session's ``Configuration/validators`` judge this response (default `true`); the request's own
    /// ``validators`` always do. Off for callers that read every status themselves, such as an OpenAPI client.
    public var usesSessionValidators: Bool {
        get { storage.usesSessionValidators }
        set { writable.usesSessionValidators = newValue }
    }

    /// Overrides ``Configuration/cookieHandling`` for this request: `[]` keeps the session's cookie jar out of it
    /// both ways, `.send` sends the jar's cookies without storing what the answer sets, `.store` the reverse.
    public var cookieHandling: CookieHandling? {
        get { storage.cookieHandling }
        set { writable.cookieHandling = newValue }
    }

    /// Plugins told when this request starts and stops (see ``RequestAccessory``).
    public var accessories: [any RequestAccessory] {
        get { storage.accessories }
        set { writable.accessories = newValue }
    }

    /// Monitors of this request alone (HLNetworking's debug block per API): told everything the session's
    /// ``Configuration/monitors`` are told of this request's call, after them, down to its ``DebugMessage`` in
    /// ``EventMonitor/didFinish(with:)``, and nothing of other requests.
    ///
    /// ```swift
    /// struct PrintDebugMessage: EventMonitor {
    ///     func didFinish(with message: DebugMessage) { print(message) }
    /// }
    /// var request = Request<User>.get("/users/1")
    /// request.monitors = [PrintDebugMessage()]
    /// ```
    public var monitors: [any EventMonitor] {
        get { storage.monitors }
        set { writable.monitors = newValue }
    }

    /// How this request checks its server's certificate (HLNetworking's security policy per API): pins, trust
    /// roots, client identity, domain validation, in place of the session's ``Configuration/tls`` for the
    /// request's host. A redirect to another host is checked by the session's policy for that host; `nil` (the
    /// default) leaves every host to the session.
    ///
    /// ```swift
    /// var payment = Request<Data>.post("/pay", body: .json(["amount": 12]))
    /// payment.tls = TLSPolicy(pinning: .publicKeys(["sha256/Q7z…="]))
    /// ```
    public var tls: TLSPolicy? {
        get { storage.tls }
        set { writable.tls = newValue }
    }

    /// What the request does with the cookie jar under `snapshot`'s configuration: its own ``cookieHandling``, else
    /// the session's. It takes the snapshot, not a `Configuration`, so that the whole configuration is not copied
    /// to pass it.
    func cookieHandling(under snapshot: SessionSnapshot) -> CookieHandling {
        cookieHandling ?? snapshot.configuration.cookieHandling
    }

    /// The credentials that sign this request under `configuration`: its own choice, else the session's.
    func credentials(under configuration: Configuration) -> (any CredentialKeeping)? {
        switch storage.authentication {
        case .session: configuration.authentication?.store
        case .own(let authentication): authentication?.store
        }
    }

    /// The request's own interceptors (``intercepting(_:)``), which run after the session's.
    var interceptors: [any ResponseInterceptor] {
        get { storage.interceptors }
        set { writable.interceptors = newValue }
    }

    /// Which authentication signs the request (``authentication(_:)``).
    var authentication: AuthenticationChoice {
        get { storage.authentication }
        set { writable.authentication = newValue }
    }

    /// Whether the request leaves the session's credentials out (``withoutCredentials()``).
    var leavesCredentialsOut: Bool {
        get { storage.leavesCredentialsOut }
        set { writable.leavesCredentialsOut = newValue }
    }

    /// Whether any interceptor applies to the request under `configuration`.
    func hasInterceptors(under configuration: Configuration) -> Bool {
        !configuration.responseInterceptors.isEmpty || !storage.interceptors.isEmpty
    }

    /// Whether the request is signed as the session signs (it chose no authentication of its own): only such
    /// requests share a call with each other, so no call answers a caller with another's credential.
    var usesSessionAuthentication: Bool {
        if case .session = storage.authentication { true } else { false }
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
        storage = RequestStorage(
            method: method,
            path: path,
            query: query,
            parameters: parameters,
            headers: headers,
            body: body
        )
        self.decode = decode
    }

    /// The same request with its result transformed.
    public func map<T: Sendable>(_ transform: @escaping @Sendable (Response) throws -> T) -> Request<T> {
        let decode = self.decode
        return decoding { try transform(try decode($0)) }
    }

    /// The same request decoding its body as `T` instead (raw bytes for `Data`, text for `String`, JSON otherwise).
    public func decoding<T: Decodable & Sendable>(
        _ type: T.Type = T.self,
        using decoder: JSONDecoder = JSONDecoder()
    ) -> Request<T> {
        decoding(with: ResponseBody.decoder(for: T.self, using: decoder))
    }

    /// A request with this storage (shared, not copied) and this decoding.
    private init(storage: RequestStorage, decode: @escaping @Sendable (ResponseBody) throws -> Response) {
        self.storage = storage
        self.decode = decode
    }

    /// The same request with another decoding: the storage is shared, not copied.
    func decoding<T: Sendable>(with decode: @escaping @Sendable (ResponseBody) throws -> T) -> Request<T> {
        Request<T>(storage: storage, decode: decode)
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
        self.init(
            method: method,
            path: path,
            query: query,
            parameters: parameters,
            headers: headers,
            body: body,
            decode: ResponseBody.decoder(for: Response.self, using: decoder)
        )
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
    public static func post(
        _ path: String,
        body: RequestBody = .empty,
        parameters: Parameters = [:],
        headers: HTTPFields = [:]
    ) -> Self {
        Self(method: .post, path: path, parameters: parameters, headers: headers, body: body)
    }

    /// A PUT request with a body.
    public static func put(
        _ path: String,
        body: RequestBody = .empty,
        parameters: Parameters = [:],
        headers: HTTPFields = [:]
    ) -> Self {
        Self(method: .put, path: path, parameters: parameters, headers: headers, body: body)
    }

    /// A PATCH request with a body.
    public static func patch(
        _ path: String,
        body: RequestBody = .empty,
        parameters: Parameters = [:],
        headers: HTTPFields = [:]
    ) -> Self {
        Self(method: .patch, path: path, parameters: parameters, headers: headers, body: body)
    }
}

/// The body type for requests whose answer carries nothing of interest.
public struct Empty: Codable, Sendable, Hashable {
    /// Creates the empty value.
    public init() {}
}
