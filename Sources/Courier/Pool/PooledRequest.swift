public import Foundation
public import HTTPTypes

/// One request in flight, as a ``RequestPool`` snapshot shows it (WYNetwork's "log all requests").
public struct PooledRequest: Sendable, Hashable, CustomStringConvertible {
    /// Whether the request waits for its turn or uses the network.
    public enum State: String, Sendable, Hashable {
        /// Queued behind a concurrency limit, a rate limit or a suspended pool.
        case waiting
        /// Sending, receiving, or sharing an identical request's call.
        case running
    }

    /// What the request is, fixed when it enters the pool: one shared object, so the pool's copies of an entry
    /// (registering, admitting, finishing, each event) retain one reference instead of each field's storage.
    final class Identity: Sendable {
        let id: RequestID
        let method: HTTPRequest.Method
        let fullURL: URL
        let parameters: Parameters
        let pathQuery: String?
        let tag: String?
        let userInfo: [String: any Sendable]
        let priority: RequestPriority
        let startDate: Date

        init(
            id: RequestID,
            method: HTTPRequest.Method,
            fullURL: URL,
            parameters: Parameters,
            pathQuery: String?,
            tag: String?,
            userInfo: [String: any Sendable],
            priority: RequestPriority,
            startDate: Date
        ) {
            self.id = id
            self.method = method
            self.fullURL = fullURL
            self.parameters = parameters
            self.pathQuery = pathQuery
            self.tag = tag
            self.userInfo = userInfo
            self.priority = priority
            self.startDate = startDate
        }
    }

    private let identity: Identity

    /// The id, for ``RequestPool/cancel(_:)``.
    public var id: RequestID { identity.id }
    /// The method.
    public var method: HTTPRequest.Method { identity.method }
    /// The URL without its query.
    public var url: URL { PoolTicket.stripQuery(fullURL) }
    /// The request's own parameters and query items, sorted and form-encoded: the same parameters give the same
    /// signature whatever their order.
    public var parameterSignature: String { PoolTicket.signature(parameters, query: pathQuery) }
    /// The URL as sent. `url` and `parameterSignature` are worked out from these only when asked for, so
    /// registering a request costs no URL parsing.
    var fullURL: URL { identity.fullURL }
    var parameters: Parameters { identity.parameters }
    var pathQuery: String? { identity.pathQuery }
    /// The request's tag.
    public var tag: String? { identity.tag }
    /// The request's ``Request/userInfo``, for the code that manages requests (it is not compared by `==`).
    public var userInfo: [String: any Sendable] { identity.userInfo }
    /// The priority.
    public var priority: RequestPriority { identity.priority }
    /// Waiting or running.
    public internal(set) var state: State
    /// `true` while the request shares the call of an identical request instead of making its own.
    public internal(set) var isCoalesced: Bool
    /// `true` between ``RequestPool/suspend(_:)`` and ``RequestPool/resume(_:)`` of this request.
    public internal(set) var isSuspended = false
    /// When the request entered the pool.
    public var startDate: Date { identity.startDate }

    init(_ identity: Identity) {
        self.identity = identity
        state = .waiting
        isCoalesced = false
    }

    /// Equal when everything but ``userInfo`` (whose values need not be comparable) is equal.
    public static func == (lhs: PooledRequest, rhs: PooledRequest) -> Bool {
        lhs.id == rhs.id && lhs.method == rhs.method && lhs.fullURL == rhs.fullURL && lhs.parameters == rhs.parameters
            && lhs.pathQuery == rhs.pathQuery && lhs.tag == rhs.tag && lhs.priority == rhs.priority
            && lhs.state == rhs.state
            && lhs.isCoalesced == rhs.isCoalesced && lhs.isSuspended == rhs.isSuspended
            && lhs.startDate == rhs.startDate
    }

    /// Hashes some of what `==` compares (the id, the URL and the state), so equal requests hash alike.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(fullURL)
        hasher.combine(state)
    }

    /// `#3 GET https://host/path [page=2] tag=feed high running 0.120 s`, with sensitive parameters redacted.
    public var description: String { line(now: Date(), redactor: .standard) }

    func line(now: Date, redactor: Redactor) -> String {
        var text = "\(id) \(method.rawValue) \(redactor.redact(url: url))"
        let signature = parameterSignature  // parsed on every read
        if !signature.isEmpty { text += " [\(redactor.redact(query: signature))]" }
        if let tag { text += " tag=\(CourierError.printable(tag))" }
        text += " \(priority) \(state.rawValue)"
        if isCoalesced { text += " (coalesced)" }
        if isSuspended { text += " (suspended)" }
        text += String(format: " %.3f s", now.timeIntervalSince(startDate))
        return text
    }
}

/// What happened to a request in a ``RequestPool``; see ``RequestPool/events``.
public enum PoolEvent: Sendable {
    /// The request began using the network (or joined an identical request's call).
    case started(PooledRequest)
    /// The request finished with a response (its status is in the second value).
    case finished(PooledRequest, HTTPResponse.Status)
    /// The request failed.
    case failed(PooledRequest, CourierError)
    /// The request was cancelled.
    case cancelled(PooledRequest)
    /// The request was suspended (``RequestPool/suspend(_:)``).
    case suspended(PooledRequest)
    /// The suspended request was resumed (``RequestPool/resume(_:)``).
    case resumed(PooledRequest)

    /// The request the event is about.
    public var request: PooledRequest {
        switch self {
        case .started(let request), .finished(let request, _), .failed(let request, _), .cancelled(let request),
            .suspended(let request),
            .resumed(let request):
            request
        }
    }
}
