import Foundation
import HTTPTypes

/// What a ``Request`` carries apart from its decoding; each field is documented on the ``Request`` property that
/// reads and writes it.
struct RequestSettings: Sendable {
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
}

/// A request's settings in one immutable object, which copies of the request share (see ``Request``).
final class StoredSettings: Sendable {
    let settings: RequestSettings

    init(_ settings: RequestSettings) {
        self.settings = settings
    }
}

/// Which ``Authentication`` signs a request.
enum AuthenticationChoice: Sendable {
    /// The session's, if it has one.
    case session
    /// This one, or none at all (`nil`).
    case own(Authentication?)
}
