import AsyncHTTPClient
import HTTPTypes
import NIOCore
import NIOHTTP1

extension AsyncHTTPClientTransport: HeadBoundedTransport {
    /// Sends a request without a streamed body through AsyncHTTPClient's async API, whose deadline ends with
    /// the head; see ``HeadBoundedTransport``. Files and streams go through ``send(_:)``, whose writer keeps
    /// several chunks in flight.
    func sendBoundingHead(_ request: TransportRequest) async throws -> TransportResponse {
        let body: HTTPClientRequest.Body?
        switch request.body {
        case .empty: body = nil
        case .bytes(let data): body = .bytes(data)
        case .file, .stream: return try await send(request)
        }
        return try await exchange(request) { client, target, deadline in
            var outgoing = HTTPClientRequest(url: target.url)
            outgoing.method = target.method
            outgoing.headers = target.headers
            outgoing.body = body
            outgoing.tlsConfiguration = target.tls
            let response = try await client.execute(outgoing, deadline: deadline)
            return Self.response(response.status, response.headers, body: response.body, timeouts: request.timeouts, url: request.url)
        }
    }
}
