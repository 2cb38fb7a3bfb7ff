import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a ``Request`` carries apart from its decoding, in one object of one concrete type that copies of the
/// request share until one of them changes a field (copy on write): the session's machinery runs on it, so
/// erasing the decoded type moves one reference instead of each field through generic code, and copying a
/// request into each async frame that holds it retains one reference. Each field is documented on the
/// ``Request`` property that reads and writes it.
///
/// `@unchecked Sendable`: its fields are written only through ``Request``'s setters, which first copy it unless
/// the request holds the only reference (`isKnownUniquelyReferenced`), so an object two requests, or two tasks,
/// can see is never written.
final class RequestStorage: @unchecked Sendable {
    var method: HTTPRequest.Method
    var path: String
    var query: Parameters
    var parameters: Parameters
    var headers: HTTPFields
    var rawHeaders: [(name: String, value: String)] = []
    var body: RequestBody
    var parameterEncoding: ParameterEncoding?
    var baseURL: URL?
    var service: ServiceID?
    var usesCDN: Bool = false
    var ignoresBaseURL: Bool = false
    var apiVersion: String?
    var includesDefaultParameters: Bool = true
    var includesDefaultHeaders: Bool = true
    /// Whether the request goes to another origin than the one its credentials are for: the headers a
    /// cross-origin redirect strips (``RedirectPolicy/crossOriginStrippedHeaders``) are left out of it, and the
    /// authenticator does not sign it.
    var leavesCredentialsOut: Bool = false
    var timeouts: TimeoutOverrides = TimeoutOverrides()
    var retryPolicy: (any RequestRetrier)?
    /// The authentication of this request when it sets its own (``Request/authentication(_:)``).
    var authentication: AuthenticationChoice = .session
    var validators: [any ResponseValidator] = []
    var interceptors: [any ResponseInterceptor] = []
    var maxResponseBytes: Int?
    var tag: String?
    var userInfo: [String: any Sendable] = [:]
    var isRaw: Bool = false
    var priority: RequestPriority = .normal
    var coalesces: Bool = true
    var cachePolicy: CachePolicy?
    var usesSessionValidators: Bool = true
    var cookieHandling: CookieHandling?
    var accessories: [any RequestAccessory] = []
    var monitors: [any EventMonitor] = []
    var tls: TLSPolicy?

    init(
        method: HTTPRequest.Method,
        path: String,
        query: Parameters,
        parameters: Parameters,
        headers: HTTPFields,
        body: RequestBody
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.parameters = parameters
        self.headers = headers
        self.body = body
    }

    /// A copy of `other`, for the request about to change a field of a storage it shares.
    init(copying other: RequestStorage) {
        method = other.method
        path = other.path
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
        leavesCredentialsOut = other.leavesCredentialsOut
        timeouts = other.timeouts
        retryPolicy = other.retryPolicy
        authentication = other.authentication
        validators = other.validators
        interceptors = other.interceptors
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

/// Which ``Authentication`` signs a request.
enum AuthenticationChoice: Sendable {
    /// The session's, if it has one.
    case session
    /// This one, or none at all (`nil`).
    case own(Authentication?)
}
