public import CoreMetrics
public import HTTPTypes
public import Logging
public import Tracing

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Everything a ``Session`` applies to every request; each request can override most of it.
///
/// ```swift
/// let config = Configuration {
///     $0.baseURL = URL(string: "https://api.example.com")
///     $0.apiVersion = "v2"
///     $0.defaultHeaders[.authorization] = "Bearer \(token)"
///     $0.retryPolicy = .exponential(maxAttempts: 3)
/// }
/// ```
public struct Configuration: Sendable {
    /// The base URL relative paths are resolved against.
    public var baseURL: URL?
    /// Named services, each with its own base URL (XZNetworking's service registry).
    public var services: [ServiceID: URL]
    /// The CDN base URL, used by requests with ``Request/usesCDN``.
    public var cdnURL: URL?
    /// A path segment inserted between the base URL and the request path (`v2` gives `base/v2/path`).
    public var apiVersion: String?
    /// Parameters added to every request: to the query for GET, HEAD and DELETE and for a request with a body of
    /// its own (whose bytes stay as they are), to the encoded parameters of the body for the rest. A request opts
    /// out with ``Request/includesDefaultParameters``; a resumable upload's own URL never gets them.
    public var defaultParameters: Parameters
    /// Headers added to every request unless it sets the same name. By default the one field is
    /// `User-Agent: courier/VERSION` (``CourierRelease/userAgent``): set your own or remove it here.
    ///
    /// swift-http-types replaces CR, LF and NUL in a value set here with spaces when the field is made, so such a
    /// value goes out altered rather than refused; ``setDefaultHeader(_:_:)`` takes strings and refuses them with
    /// ``CourierError/Code/invalidHeader``.
    public var defaultHeaders: HTTPFields
    /// Sets the default header `name` to `value`, replacing earlier values; throws
    /// ``CourierError/Code/invalidHeader`` for a name that is not a token or a value with a control character.
    public mutating func setDefaultHeader(_ name: String, _ value: String) throws {
        let field = try HeaderValidation.field(name: name, value: value)
        defaultHeaders[field.name] = field.value
    }

    /// How body parameters are encoded when a request does not say (WYNetwork's request serializer).
    public var parameterEncoding: ParameterEncoding
    /// Connect, read-idle and total timeouts (30 s each by default).
    public var timeouts: Timeouts
    /// Adapters applied in order to every request before it is sent.
    public var adapters: [any RequestAdapter]
    /// Adapters applied in order to every request's parameters before they are encoded (see ``ParameterAdapter``).
    public var parameterAdapters: [any ParameterAdapter]
    /// Validators applied in order to every response; by default only 2xx statuses pass.
    public var validators: [any ResponseValidator]
    /// The rule that decides whether a failed attempt goes again (``RetryPolicy``, or a ``RequestRetrier`` of
    /// your own); `nil` never retries.
    public var retryPolicy: (any RequestRetrier)?
    /// Monitors told about each request's life.
    public var monitors: [any EventMonitor]
    /// How redirects are followed.
    public var redirects: RedirectPolicy
    /// Size and decompression limits, enforced while the body streams in.
    public var limits: ResponseLimits
    /// Ask for and decode gzip and deflate bodies.
    public var decompressesResponses: Bool
    /// Where Courier logs; requests and responses are logged at `.debug` when ``debugLogging`` is on.
    public var logger: Logger
    /// Log each request line, headers, body preview, status and duration (HLNetworking's debug message).
    public var debugLogging: Bool
    /// What is hidden from logs, error previews and cURL exports.
    public var redactor: Redactor
    /// Concurrency limits, rate limits and coalescing of the session's ``RequestPool``.
    public var scheduling: SchedulingOptions
    /// Texts for users, put in ``CourierError/userMessage`` of failures they fit.
    public var userMessages: UserMessages
    /// The response cache; `nil` (the default) caches nothing.
    public var cache: ResponseCache?
    /// What requests take from ``cache`` unless they say otherwise (default ``CachePolicy/http``, as a browser
    /// or `URLSession` behaves). Without a cache every policy is ``CachePolicy/networkOnly``.
    public var cachePolicy: CachePolicy
    /// How servers' certificates are checked, for every host and per host (see ``TLSSettings``).
    public var tls: TLSSettings
    /// How long a request whose host (or proxy) cannot be reached waits for it to come back, probing it, before
    /// failing with ``CourierError/Code/offline``; `nil` (the default) fails at once. Bounded by the request's
    /// total timeout; only requests whose body can be sent again wait.
    public var waitsForConnectivity: Duration?
    /// Where Courier's metrics go (see the metrics table in <doc:MetricsAndTracing>); `nil` (the default) uses
    /// the process's `MetricsSystem`, as bootstrapped when the session is created or its configuration changes.
    public var metricsFactory: (any MetricsFactory)?
    /// The tracer that makes a span per request and puts its context into the request's headers (W3C
    /// `traceparent` with an OpenTelemetry tracer); `nil` (the default) uses `InstrumentationSystem.tracer`, as
    /// bootstrapped when the session is created or its configuration changes (bootstrap the process's systems
    /// first, as swift-log, swift-metrics and swift-distributed-tracing ask).
    public var tracer: (any Tracer)?
    /// Whether `https` requests may use HTTP/2: ``HTTPVersionPolicy/automatic`` (the default) lets ALPN choose,
    /// so many requests share one connection; ``HTTPVersionPolicy/http1Only`` never offers HTTP/2.
    public var httpVersion: HTTPVersionPolicy
    /// Which proxy each request goes through; none by default (``ProxySettings/environment(_:)`` reads
    /// `http_proxy`, `https_proxy` and `no_proxy`).
    public var proxies: ProxySettings
    /// Host names whose connections go to another address, as curl's `--resolve` sends them (`["example.com":
    /// "127.0.0.1"]`): the request, its `Host` and the certificate check keep the name (a certificate that names
    /// only the address is refused, as curl refuses it). Applied by the transport a
    /// session makes for itself (AsyncHTTPClient's `dnsOverride`, which maps a name for all its ports); a
    /// transport you pass applies its own settings. Empty by default.
    public var hostAddresses: [String: String]
    /// Where cookies are kept; `nil` (the default) neither sends nor stores any.
    public var cookieJar: CookieJar?
    /// Whether the jar's cookies are sent with requests and `Set-Cookie` answers stored in it (both by default).
    public var cookieHandling: CookieHandling
    /// Steps applied in order to every answer read whole, before the validators: they may rewrite it or answer
    /// a call without the network (see ``ResponseInterceptor``).
    public var responseInterceptors: [any ResponseInterceptor]
    /// Signs every call with a credential and refreshes it once when the server refuses it (see
    /// ``Authenticator``); `nil` (the default) signs nothing. A request opts out with `.authentication(nil)`.
    public var authentication: Authentication?

    /// Creates a configuration with Courier's defaults.
    public init() {
        self.init { _ in }
    }

    /// Creates a configuration with Courier's defaults, then lets `configure` change it; throws what `configure`
    /// throws (a store or a jar that cannot be opened), so `try Configuration { $0.cookieJar = try CookieJar(…) }`.
    public init(_ configure: (inout Configuration) throws -> Void) rethrows {
        baseURL = nil
        services = [:]
        cdnURL = nil
        apiVersion = nil
        defaultParameters = [:]
        defaultHeaders = [.userAgent: CourierRelease.userAgent]
        parameterEncoding = .form
        timeouts = Timeouts()
        adapters = []
        parameterAdapters = []
        validators = [StatusCodeValidator.successful]
        retryPolicy = nil
        monitors = []
        redirects = RedirectPolicy()
        limits = ResponseLimits()
        decompressesResponses = true
        hostAddresses = [:]
        logger = Logger(label: "courier")
        debugLogging = false
        redactor = .standard
        scheduling = SchedulingOptions()
        userMessages = UserMessages()
        cache = nil
        cachePolicy = .http
        tls = TLSSettings()
        proxies = .none
        httpVersion = .automatic
        metricsFactory = nil
        tracer = nil
        waitsForConnectivity = nil
        cookieJar = nil
        cookieHandling = [.send, .store]
        authentication = nil
        responseInterceptors = []
        try configure(&self)
    }
}

/// Limits on what a response may make Courier hold, checked chunk by chunk as the body arrives.
public struct ResponseLimits: Sendable, Hashable {
    /// The largest body kept in memory, after decompression (default 256 MiB).
    public var maxBodyBytes: Int
    /// The largest ratio of decompressed to compressed bytes (default 200), checked once the output passes
    /// ``ratioCheckFloor`` so a small, very repetitive body is not refused.
    public var maxDecompressionRatio: Int
    /// Output size below which the ratio is not checked (default 1 MiB).
    public var ratioCheckFloor: Int

    /// Creates limits.
    public init(maxBodyBytes: Int = 256 << 20, maxDecompressionRatio: Int = 200, ratioCheckFloor: Int = 1 << 20) {
        self.maxBodyBytes = maxBodyBytes
        self.maxDecompressionRatio = maxDecompressionRatio
        self.ratioCheckFloor = ratioCheckFloor
    }
}
