#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A step on every answer a call reads whole, between the network (or the cache) and the validators: it may
/// rewrite the answer (decrypt a body, unwrap a `{code, data}` envelope: XZNetworking's "encryption" and
/// RBEFireworks' "unified result handling") or answer a call without the network (a stub, an offline answer).
///
/// Interceptors run in order: the session's (``Configuration/responseInterceptors``), then the request's own
/// (``Request/intercepting(_:)``). The first whose ``answer(_:)`` returns an answer ends the call's trip: no
/// pool, no cache, no network; that answer then passes through every interceptor's
/// ``intercept(_:for:)`` like any other. The cache keeps answers as the server sent them, so an answer from the
/// cache is intercepted again each time it is used. A stream (``Session/stream(_:)``) is not intercepted: its
/// caller reads the body as it arrives.
///
/// ```swift
/// struct Unwrap: ResponseInterceptor {
///     func intercept(_ response: ResponseBody, for request: PreparedRequest) async throws -> ResponseBody {
///         guard let object = try? JSONSerialization.jsonObject(with: response.data) as? [String: Any],
///               let code = object["code"] as? Int else { return response }
///         guard code == 0 else { throw CourierError.validation("the API answered code \(code)", keyPath: "code") }
///         var unwrapped = response
///         unwrapped.data = try JSONSerialization.data(withJSONObject: object["data"] ?? NSNull(), options: [.fragmentsAllowed])
///         return unwrapped
///     }
/// }
/// ```
public protocol ResponseInterceptor: Sendable {
    /// An answer to `request` without the network, or `nil` (the default) to send it.
    func answer(_ request: PreparedRequest) async throws -> ResponseBody?
    /// The answer as the next interceptor, the validators and the decoder see it (the answer itself by default);
    /// a thrown error fails the call.
    func intercept(_ response: ResponseBody, for request: PreparedRequest) async throws -> ResponseBody
}

extension ResponseInterceptor {
    /// Sends the request.
    public func answer(_ request: PreparedRequest) async throws -> ResponseBody? { nil }
    /// Leaves the answer as it is.
    public func intercept(_ response: ResponseBody, for request: PreparedRequest) async throws -> ResponseBody {
        response
    }
}
