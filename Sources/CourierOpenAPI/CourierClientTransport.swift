public import Courier
public import HTTPTypes
import NIOCore
public import OpenAPIRuntime

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A swift-openapi-runtime `ClientTransport` backed by a Courier ``/Courier/Session``, so a client made by
/// swift-openapi-generator gets the session's pool, cache, retries, interceptors, TLS policies, cookies, metrics and tracing.
///
/// ```swift
/// let client = Client(serverURL: try Servers.Server1.url(),
///                     transport: CourierClientTransport(session: session))
/// ```
///
/// Every status goes back to the generated code, which decides what it means: the session's validators are not
/// applied, the request's operation ID becomes its ``/Courier/Request/tag``.
///
/// Bodies stream both ways. A request body goes out as the generated code's `HTTPBody` yields it, never gathered;
/// one that allows multiple iterations can be sent again (a retry, a 307 or 308 redirect), one that allows a single
/// iteration is sent once. A response body is handed over as it arrives, as an `HTTPBody` that allows a single
/// iteration, decompressed as it is read and with its `Content-Length` as its length when it was not compressed.
/// Bodies are bounded by the session's ``/Courier/Configuration/limits``, except those of event streams and JSON
/// lines or sequences, which run on. The one exception to streaming is a `GET` the session's cache could answer
/// (see ``gathersResponse(to:cached:)``), read whole through ``/Courier/Session/send(_:)`` so the cache applies.
public struct CourierClientTransport: ClientTransport {
    /// The session requests go through.
    public let session: Session

    /// Creates a transport over `session`, which the caller keeps and shuts down.
    public init(session: Session) {
        self.session = session
    }

    /// Sends one operation's request; see `ClientTransport.send(_:body:baseURL:operationID:)`.
    public func send(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let base =
            baseURL.absoluteString.hasSuffix("/") ? String(baseURL.absoluteString.dropLast()) : baseURL.absoluteString
        let outgoing = Request<Data>(
            method: request.method,
            path: base + (request.path ?? "/"),
            headers: request.headerFields,
            body: Self.requestBody(body, contentType: request.headerFields[.contentType])
        )
        .withoutSessionValidators()
        .tag(operationID)
        if Self.gathersResponse(to: request, cached: session.currentConfiguration.cache != nil) {
            let response = try await session.send(outgoing)
            var headers = response.headers
            headers[.contentLength] = nil  // the body is handed over whole; its length is its own
            let body = request.method == .head ? nil : HTTPBody(response.body)
            return (HTTPResponse(status: response.status, headerFields: headers), body)
        }
        let accept = request.headerFields[.accept]
        let response = try await session.streamWithinLimits(outgoing, boundsLength: !MediaTypes.runOn(accept))
        let length = response.headers[.contentLength].flatMap(Int64.init).map(HTTPBody.Length.known) ?? .unknown
        let body = HTTPBody(
            response.body.map { ArraySlice($0.readableBytesView) },
            length: length,
            iterationBehavior: .single
        )
        return (HTTPResponse(status: response.status, headerFields: response.headers), body)
    }

    /// Whether the response to `request` is read whole rather than streamed: a `HEAD` (it has no body), and a
    /// `GET` when the session has a cache (`cached`) and the request accepts no streamed media type (events, JSON
    /// lines or sequences, `application/octet-stream`), so a cached answer can be served and a fresh one stored.
    public static func gathersResponse(to request: HTTPRequest, cached: Bool) -> Bool {
        switch request.method {
        case .head: true
        case .get: cached && !MediaTypes.streamed(request.headerFields[.accept])
        default: false
        }
    }

    /// The generated code's body as a Courier body: streamed as it is iterated, replayable when the `HTTPBody`
    /// allows multiple iterations.
    private static func requestBody(_ body: HTTPBody?, contentType: String?) -> RequestBody {
        guard let body else { return .empty }
        let length: Int64? = if case .known(let length) = body.length { length } else { nil }
        return .stream(
            body.map { ByteBuffer(bytes: $0) },
            length: length,
            contentType: contentType,
            replayable: body.iterationBehavior == .multiple
        )
    }
}

/// The media types that decide how a response body is read.
enum MediaTypes {
    /// Bodies meant to run on, read a record at a time: no bound on their length.
    static let runningOn: Set<String> = [
        "text/event-stream", "application/jsonl", "application/x-ndjson", "application/ndjson",
        "application/x-jsonlines", "application/json-seq",
    ]

    /// Whether `accept` names a type meant to run on.
    static func runOn(_ accept: String?) -> Bool { names(accept) { runningOn.contains($0) } }

    /// Whether `accept` names a type meant to run on, or raw bytes, which are streamed even past a cache.
    static func streamed(_ accept: String?) -> Bool {
        names(accept) { runningOn.contains($0) || $0 == "application/octet-stream" }
    }

    /// Whether one of the media types in an `Accept` value (parameters and weights left off) passes `test`.
    private static func names(_ accept: String?, _ test: (String) -> Bool) -> Bool {
        guard let accept else { return false }
        return accept.split(separator: ",").contains { test(MediaType.essence(of: $0)) }
    }
}
