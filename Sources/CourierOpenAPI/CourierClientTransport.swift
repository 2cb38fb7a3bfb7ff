public import Courier
public import Foundation
public import HTTPTypes
import NIOCore
public import OpenAPIRuntime

/// A swift-openapi-runtime `ClientTransport` backed by a Courier ``/Courier/Session``, so a client made by
/// swift-openapi-generator gets the session's pool, cache, retries, interceptors, TLS policies, cookies, metrics and tracing.
///
/// ```swift
/// let client = Client(serverURL: try Servers.Server1.url(),
///                     transport: CourierClientTransport(session: session))
/// ```
///
/// Every status goes back to the generated code, which decides what it means: the session's validators are not
/// applied, the request's operation ID becomes its ``/Courier/Request/tag``. Request bodies of known length up to
/// ``bufferedBodyLimit`` are gathered so they can be retried and coalesced; longer or unknown ones stream, once.
/// Response bodies are gathered within the session's ``/Courier/ResponseLimits``, then handed over.
public struct CourierClientTransport: ClientTransport {
    /// The session requests go through.
    public let session: Session
    /// The longest request body gathered in memory (default 4 MiB).
    public var bufferedBodyLimit: Int

    /// Creates a transport over `session`, which the caller keeps and shuts down.
    public init(session: Session, bufferedBodyLimit: Int = 4 << 20) {
        self.session = session
        self.bufferedBodyLimit = bufferedBodyLimit
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
        var outgoing = Request<Data>(
            method: request.method,
            path: base + (request.path ?? "/"),
            headers: request.headerFields,
            body: try await requestBody(body, contentType: request.headerFields[.contentType])
        )
        .withoutSessionValidators()
        .tag(operationID)
        if case .known = body?.length {} else if body != nil { outgoing = outgoing.withoutCoalescing() }
        let response = try await session.send(outgoing)
        var headers = response.headers
        headers[.contentLength] = nil  // the body is handed over whole; its length is its own
        return (HTTPResponse(status: response.status, headerFields: headers), HTTPBody(response.body))
    }

    private func requestBody(_ body: HTTPBody?, contentType: String?) async throws -> RequestBody {
        guard let body else { return .empty }
        if case .known(let length) = body.length, length <= bufferedBodyLimit {
            return .bytes(try await Data(collecting: body, upTo: Int(length)), contentType: contentType)
        }
        let length: Int64? = if case .known(let length) = body.length { length } else { nil }
        return .stream(body.map { ByteBuffer(bytes: $0) }, length: length, contentType: contentType)
    }
}
