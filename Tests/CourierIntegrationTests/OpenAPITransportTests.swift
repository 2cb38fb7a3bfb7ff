import Courier
import CourierOpenAPI
import CourierTesting
import Foundation
import HTTPTypes
import MetricsTestKit
import OpenAPIRuntime
import Testing

/// A hand-written client in the shape swift-openapi-generator gives: operations that build an `HTTPRequest` and
/// an `HTTPBody`, call the transport, and read the status and body themselves.
private struct EchoClient {
    let transport: any ClientTransport
    let serverURL: URL

    enum EchoOutput {
        case ok(Echo)
        case notFound
        case other(Int)
    }

    /// `POST /echo?lang=…` with a JSON body (operation `postEcho`).
    func postEcho(lang: String, body: [String: String]) async throws -> EchoOutput {
        var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/echo?lang=\(lang)")
        request.headerFields[.contentType] = "application/json; charset=utf-8"
        request.headerFields[.accept] = "application/json"
        let (response, responseBody) = try await transport.send(
            request,
            body: HTTPBody(try JSONEncoder().encode(body)),
            baseURL: serverURL,
            operationID: "postEcho"
        )
        return try await output(response, responseBody)
    }

    /// `GET /status/{code}` (operation `getStatus`).
    func getStatus(_ code: Int) async throws -> EchoOutput {
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/status/\(code)")
        let (response, body) = try await transport.send(
            request,
            body: nil,
            baseURL: serverURL,
            operationID: "getStatus"
        )
        return try await output(response, body)
    }

    /// `PUT /echo` with a streamed body of unknown length (operation `putStream`).
    func putStream(_ chunks: [String]) async throws -> EchoOutput {
        let request = HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/echo")
        let stream = AsyncStream<ArraySlice<UInt8>> { continuation in
            for chunk in chunks { continuation.yield(ArraySlice(chunk.utf8)) }
            continuation.finish()
        }
        let (response, body) = try await transport.send(
            request,
            body: HTTPBody(stream, length: .unknown),
            baseURL: serverURL,
            operationID: "putStream"
        )
        return try await output(response, body)
    }

    private func output(_ response: HTTPResponse, _ body: HTTPBody?) async throws -> EchoOutput {
        switch response.status.code {
        case 200:
            let data = try await Data(collecting: try #require(body), upTo: 1 << 20)
            return .ok(try JSONDecoder().decode(Echo.self, from: data))
        case 404: return .notFound
        default: return .other(response.status.code)
        }
    }
}

@Suite("CourierOpenAPI: a ClientTransport backed by a Courier session")
struct OpenAPITransportTests {
    @Test func operationsGoThroughTheSessionWithItsRetriesMetricsAndEveryStatusReturned() async throws {
        let metrics = TestMetrics()
        try await withServerSession({
            $0.metricsFactory = metrics
            $0.defaultHeaders[HTTPField.Name("X-App")!] = "courier"
            $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1))
        }) { session, server in
            let client = EchoClient(transport: CourierClientTransport(session: session), serverURL: server.baseURL)
            guard case .ok(let echo) = try await client.postEcho(lang: "sv", body: ["name": "ada"]) else {
                Issue.record("expected 200")
                return
            }
            #expect(echo.method == "POST" && echo.query == ["lang": "sv"])
            #expect(echo.body == #"{"name":"ada"}"#)
            #expect(echo.header("content-type") == "application/json; charset=utf-8")
            #expect(echo.header("x-app") == "courier")  // the session's defaults apply
            guard case .notFound = try await client.getStatus(404) else {
                Issue.record("a 404 is the generated code's to interpret, not an error")
                return
            }
            guard case .other(503) = try await client.getStatus(503) else {
                Issue.record("expected 503 after the retries")
                return
            }
            #expect(server.hits("/status/503") == 3)  // the session's retry policy ran
            guard case .ok(let streamed) = try await client.putStream(["one ", "two ", "three"]) else {
                Issue.record("expected 200")
                return
            }
            #expect(streamed.body == "one two three" && streamed.header("transfer-encoding") == "chunked")
        }
        let calls = metrics.timers.filter { $0.label == "http.client.request.duration" }
        func count(_ method: String, _ status: String) -> Int {
            calls.filter {
                $0.dimensions.contains { $0 == ("http.request.method", method) }
                    && $0.dimensions.contains { $0 == ("http.response.status_code", status) }
            }.map(\.values.count).reduce(0, +)
        }
        #expect(count("POST", "200") == 1)
        #expect(count("GET", "404") == 1)
    }

    @Test func transportFailuresAreThrownAsCourierErrors() async throws {
        let session = Session()
        let transport = CourierClientTransport(session: session)
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/")
        await #expect(throws: CourierError.self) {
            _ = try await transport.send(
                request,
                body: nil,
                baseURL: URL(string: "http://127.0.0.1:9")!,
                operationID: "down"
            )
        }
        try await session.shutdown()
    }
}
