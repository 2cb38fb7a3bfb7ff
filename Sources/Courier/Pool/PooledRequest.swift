public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One request in flight, as a ``RequestPool`` snapshot shows it (WYNetwork's "log all requests").
public struct PooledRequest: Sendable, Hashable, CustomStringConvertible {
    /// Whether the request waits for its turn or uses the network.
    public enum State: String, Sendable, Hashable {
        /// Queued behind a concurrency limit, a rate limit or a suspended pool.
        case waiting
        /// Sending, receiving, or sharing an identical request's call.
        case running
    }

    /// The call the request makes, which holds what the request is: the fields below read it when asked for, so a
    /// request that enters the pool makes nothing for it, and the pool's copies of an entry (registering,
    /// admitting, finishing, each event) retain one reference. A kept `PooledRequest` keeps the call, and so the
    /// request's body, alive.
    private let call: Call

    /// The id, for ``RequestPool/cancel(_:)``.
    public let id: RequestID
    /// The method.
    public var method: HTTPRequest.Method { call.prepared.method }
    /// The URL without its query.
    public var url: URL { Self.stripQuery(fullURL) }
    /// The request's own parameters and query items, sorted and form-encoded: the same parameters give the same
    /// signature whatever their order.
    public var parameterSignature: String { Self.signature(parameters, query: pathQuery) }
    /// The URL as sent. `url` and `parameterSignature` are worked out from these only when asked for, so
    /// registering a request costs no URL parsing.
    var fullURL: URL { call.prepared.url }
    /// The request's own query items and parameters.
    var parameters: Parameters {
        let request = call.request
        guard !request.parameters.isEmpty else { return request.query }  // as usual: nothing to merge
        return request.query.merging(request.parameters) { _, own in own }
    }
    /// A query written into the request's path (`/search?q=1`).
    var pathQuery: String? { Self.query(inPath: call.request.path) }
    /// The request's tag.
    public var tag: String? { call.prepared.tag }
    /// The request's ``Request/userInfo``, for the code that manages requests (it is not compared by `==`).
    public var userInfo: [String: any Sendable] { call.prepared.userInfo }
    /// The priority.
    public var priority: RequestPriority { call.request.priority }
    /// Waiting or running.
    public internal(set) var state: State
    /// `true` while the request shares the call of an identical request instead of making its own.
    public internal(set) var isCoalesced: Bool
    /// `true` between ``RequestPool/suspend(_:)`` and ``RequestPool/resume(_:)`` of this request.
    public internal(set) var isSuspended = false
    /// When the request started: prepared, then entered the pool.
    public var startDate: Date { call.start.date }

    init(id: RequestID, call: Call) {
        self.id = id
        self.call = call
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
        text += " \(now.timeIntervalSince(startDate).fixedText(3)) s"
        return text
    }
}

extension PooledRequest {
    /// The query written into `path` (between `?` and `#`); scanned as UTF-8.
    static func query(inPath path: String) -> String? {
        let bytes = path.utf8
        guard let mark = bytes.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        let rest = bytes[bytes.index(after: mark)...]
        return String(rest.prefix { $0 != UInt8(ascii: "#") })
    }

    /// Sorted, form-encoded pairs of `parameters` and the items of `query` (`a=1&b=2`, percent-encoded).
    static func signature(_ parameters: Parameters, query: String?) -> String {
        var pairs = FormEncoding.pairs(parameters)
        if let query, let items = URLComponents(string: "http://x/?" + query)?.queryItems {
            pairs += items.map { "\(FormEncoding.escape($0.name))=\(FormEncoding.escape($0.value ?? ""))" }
        }
        return pairs.sorted().joined(separator: "&")
    }

    /// Sorted, form-encoded pairs of `parameters` and the query items of `url`.
    static func signature(_ parameters: Parameters, url: URL?) -> String {
        signature(parameters, query: url?.query(percentEncoded: true))
    }

    /// `url` without its query and fragment: what "all requests to a URL" compares.
    static func stripQuery(_ url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.query = nil
        components.fragment = nil
        return components.url ?? url
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

/// Identifies one request in a ``RequestPool`` for as long as it is in flight.
public struct RequestID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number, unique within one pool.
    public let rawValue: UInt64

    /// Wraps a number; pools hand these out.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Orders by creation.
    public static func < (lhs: RequestID, rhs: RequestID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `#12`.
    public var description: String { "#\(rawValue)" }
}
