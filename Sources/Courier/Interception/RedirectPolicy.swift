public import HTTPTypes

#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// How redirects are followed: at most ``maxHops``, never in a cycle, and credentials stay with their origin.
public struct RedirectPolicy: Sendable, Hashable {
    /// Follow redirects at all.
    public var follows: Bool
    /// The most redirects one request may follow (default 10).
    public var maxHops: Int
    /// Headers removed when a redirect leaves the origin (scheme, host and port).
    public var crossOriginStrippedHeaders: Set<HTTPField.Name>

    /// Creates a policy.
    public init(
        follows: Bool = true,
        maxHops: Int = 10,
        crossOriginStrippedHeaders: Set<HTTPField.Name> = [.authorization, .cookie, .proxyAuthorization]
    ) {
        self.follows = follows
        self.maxHops = maxHops
        self.crossOriginStrippedHeaders = crossOriginStrippedHeaders
    }

    /// Never follow; 3xx responses are returned (and validated) as they are.
    public static let none = RedirectPolicy(follows: false)
}

/// What to do with one response, decided by ``RedirectState``.
package enum RedirectAction: Equatable {
    /// Not a redirect we follow: deliver the response.
    case deliver
    /// Send this request next.
    case follow(method: HTTPRequest.Method, url: URL, dropsBody: Bool, stripsCredentials: Bool)
}

/// The redirect decisions of one request, as a pure value: it sees each response and answers what to do.
package struct RedirectState {
    let policy: RedirectPolicy
    private let initialMethod: HTTPRequest.Method
    private let initialURL: URL
    /// Filled on the first redirect, so a request that is not redirected pays nothing.
    private(set) var visited: [String] = []
    private(set) var hops = 0

    package init(policy: RedirectPolicy, initial method: HTTPRequest.Method, url: URL) {
        self.policy = policy
        self.initialMethod = method
        self.initialURL = url
    }

    package mutating func next(
        method: HTTPRequest.Method,
        url: URL,
        status: HTTPResponse.Status,
        location: @autoclosure () -> String?,
        bodyIsReplayable: Bool
    ) throws -> RedirectAction {
        guard policy.follows, [301, 302, 303, 307, 308].contains(status.code), let location = location() else {
            return .deliver
        }
        let target = URL(string: URLBuilder.encodingOnlyWhatNeedsIt(location), relativeTo: url)?.absoluteURL
        guard let target, URLBuilder.isAbsoluteHTTP(target) else {
            throw CourierError.invalidURL(
                location,
                reason: target?.portProblem.map { "redirect to \($0)" } ?? "redirect to an invalid location"
            )
        }

        let newMethod: HTTPRequest.Method
        switch status.code {
        case 303: newMethod = method == .head ? .head : .get
        case 301, 302: newMethod = method == .post ? .get : method  // what browsers and curl do
        default: newMethod = method
        }
        let dropsBody = newMethod != method
        if !dropsBody && !bodyIsReplayable {
            return .deliver  // a streamed body cannot be sent twice; hand the redirect to the caller
        }
        if visited.isEmpty { visited.append(Self.key(initialMethod, initialURL)) }
        let key = Self.key(newMethod, target)
        if visited.contains(key) {
            throw CourierError(
                code: .redirectLoop,
                message: "redirect loop: \(Redactor.standard.redact(url: target)) was already visited"
            )
        }
        hops += 1
        if hops > policy.maxHops {
            throw CourierError(code: .tooManyRedirects, message: "more than \(policy.maxHops) redirects")
        }
        visited.append(key)
        return .follow(
            method: newMethod,
            url: target,
            dropsBody: dropsBody,
            stripsCredentials: !Self.sameOrigin(url, target)
        )
    }

    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        a.scheme?.lowercased() == b.scheme?.lowercased() && a.host()?.lowercased() == b.host()?.lowercased()
            && a.effectivePort == b.effectivePort
    }

    private static func key(_ method: HTTPRequest.Method, _ url: URL) -> String {
        "\(method.rawValue) \(url.absoluteString)"
    }
}
