public import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Puts a credential on each attempt of a call and gets a fresh one when the server refuses it: OkHttp's
/// `Authenticator`, Alamofire's `AuthenticationInterceptor`.
///
/// Courier calls ``refresh(_:)`` once for every call refused with the same credential: fifty calls that meet a
/// 401 together wait for one refresh, then each goes again with the fresh credential. A call that carried an
/// older credential than the current one goes again with the current one without a refresh. A refresh that
/// throws fails the calls waiting for it with ``CourierError/Code/authenticationFailed``, which carries its
/// error; so does a refusal of fresh credentials again and again, so a server that refuses everything meets no
/// refresh loop.
///
/// The fields ``apply(_:to:)`` sets are marked never to be indexed (`HTTPField.indexingStrategy`
/// `.disallow`, for HTTP/2's header compression) and are hidden from every log line and cURL export.
///
/// ```swift
/// import HTTPTypes
///
/// struct TokenAuthenticator: Authenticator {
///     func apply(_ credential: String, to request: inout HTTPRequest) {
///         request.headerFields[.authorization] = "Bearer \(credential)"
///     }
///     func refresh(_ credential: String) async throws -> String {
///         try await session.send(Request<String>.post("/token/refresh")).value
///     }
/// }
/// let configuration = Configuration { $0.authentication = Authentication(TokenAuthenticator(), credential: "initial") }
/// ```
public protocol Authenticator: Sendable {
    /// What the authenticator puts on a request: a token, a key pair, a signed session.
    associatedtype Credential: Sendable
    /// Puts the credential on one attempt.
    func apply(_ credential: Credential, to request: inout HTTPRequest)
    /// A fresh credential after `credential` was refused. Called once for every call refused with that credential.
    func refresh(_ credential: Credential) async throws -> Credential
    /// Whether this answer refuses the credential (default: status 401).
    func isRefusal(_ response: HTTPResponse) -> Bool
}

extension Authenticator {
    /// Status 401 Unauthorized.
    public func isRefusal(_ response: HTTPResponse) -> Bool { response.status.code == 401 }
}

/// An ``Authenticator`` with its current credential: what a session (``Configuration/authentication``) or one
/// request (``Request/authentication(_:)``) signs its calls with. Copies share the credential, so a refresh one
/// call makes is seen by every call made under any copy.
public struct Authentication: Sendable {
    let store: any CredentialKeeping

    /// Signs calls with `authenticator`, starting from `credential`.
    public init<A: Authenticator>(_ authenticator: A, credential: A.Credential) {
        store = CredentialStore(authenticator, credential: credential)
    }
}

/// What the call pipeline asks of an ``Authentication``, whatever its credential's type.
protocol CredentialKeeping: AnyObject, Sendable {
    /// Puts the current credential on `request`; returns its generation, which a refusal names.
    func apply(to request: inout PreparedRequest) -> Int
    /// Whether the answer refuses the credential.
    func isRefusal(_ status: HTTPResponse.Status, headers: HTTPFields) -> Bool
    /// Returns once a credential newer than `generation` is current: at once when one already is, else after the
    /// one refresh that every call refused with `generation` waits for. A call that `call` cancels stops
    /// waiting at once (``CourierError/Code/cancelled``); the refresh goes on for the others.
    func refresh(after generation: Int, call: Call?) async throws
}

extension CredentialKeeping {
    /// ``refresh(after:call:)`` for a caller that waits until the refresh ends.
    func refresh(after generation: Int) async throws {
        try await refresh(after: generation, call: nil)
    }
}

/// The current credential, its generation, and the refresh in flight, behind one lock.
final class CredentialStore<A: Authenticator>: CredentialKeeping {
    private struct State {
        var credential: A.Credential
        var generation = 0
        var refreshing: Task<Void, any Error>?
    }

    private let authenticator: A
    private let state: Locked<State>

    init(_ authenticator: A, credential: A.Credential) {
        self.authenticator = authenticator
        state = Locked(State(credential: credential))
    }

    func apply(to request: inout PreparedRequest) -> Int {
        let (credential, generation) = state.withLock { ($0.credential, $0.generation) }
        let before = request.headers
        var http = HTTPRequest(
            method: request.method,
            scheme: request.url.scheme,
            authority: request.url.authorityText,
            path: request.url.requestTarget,
            headerFields: before
        )
        authenticator.apply(credential, to: &http)
        var fields = HTTPFields()
        for var field in http.headerFields {
            // the credential: never indexed, never logged
            if !before.contains(field) { field.indexingStrategy = .disallow }
            fields.append(field)
        }
        request.headers = fields
        if let path = http.path, path != request.url.requestTarget, let url = request.url.replacingRequestTarget(path) {
            request.url = url
        }
        return generation
    }

    func isRefusal(_ status: HTTPResponse.Status, headers: HTTPFields) -> Bool {
        authenticator.isRefusal(HTTPResponse(status: status, headerFields: headers))
    }

    func refresh(after generation: Int, call: Call?) async throws {
        let refreshing = state.withLock { state -> Task<Void, any Error>? in
            guard state.generation == generation else { return nil }  // a newer credential is current already
            if let running = state.refreshing { return running }
            let refused = state.credential
            // A task of its own: the refresh belongs to every call waiting for it, not to the one that asked first,
            // so that call's cancellation does not fail the others.
            let task = Task { [authenticator, state = self.state] in
                do {
                    let fresh = try await authenticator.refresh(refused)
                    state.withLock { state in
                        state.credential = fresh
                        state.generation += 1
                        state.refreshing = nil
                    }
                } catch {
                    state.withLock { $0.refreshing = nil }  // the next refusal tries again
                    throw error
                }
            }
            state.refreshing = task
            return task
        }
        guard let refreshing else { return }
        if let call {
            try await SharedTaskWait.wait(for: refreshing, call: call)
        } else {
            try await refreshing.value
        }
    }
}
