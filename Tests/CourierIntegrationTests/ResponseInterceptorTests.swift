import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Response interceptors: rewrite an answer before validation and decoding, or answer a call without the network.
@Suite("Response interceptors", .timeLimit(.minutes(1)))
struct ResponseInterceptorTests {
    /// Unwraps a `{code, data}` envelope (here `/echo`'s `query` is the data and its `code` item the code): the
    /// data goes on to the decoder, a code other than 0 fails the call.
    struct Unwrap: ResponseInterceptor {
        let calls = Locked(0)
        func intercept(_ response: ResponseBody, for request: PreparedRequest) async throws -> ResponseBody {
            calls.withLock { $0 += 1 }
            guard let object = try JSONSerialization.jsonObject(with: response.data) as? [String: Any],
                var data = object["query"] as? [String: String]
            else { return response }
            let code = data.removeValue(forKey: "code") ?? "0"
            guard code == "0" else { throw CourierError.validation("the API answered code \(code)", keyPath: "code") }
            var unwrapped = response
            unwrapped.data = try JSONSerialization.data(withJSONObject: data, options: [.sortedKeys])
            return unwrapped
        }
    }

    /// Appends its mark to a text body: shows the order interceptors run in.
    struct Mark: ResponseInterceptor {
        let mark: String
        func intercept(_ response: ResponseBody, for request: PreparedRequest) async throws -> ResponseBody {
            var marked = response
            marked.data.append(Data(mark.utf8))
            return marked
        }
    }

    /// Answers `/offline/…` itself, with the status its last path component names.
    struct Offline: ResponseInterceptor {
        var body = "stub"
        func answer(_ request: PreparedRequest) async throws -> ResponseBody? {
            guard request.url.path().hasPrefix("/offline/") else { return nil }
            let status = Int(request.url.lastPathComponent) ?? 200
            return ResponseBody(
                status: HTTPResponse.Status(code: status),
                headers: [.contentType: "text/plain"],
                data: Data(body.utf8)
            )
        }
    }

    @Test func anEnvelopeIsUnwrappedBeforeDecodingAndAnErrorCodeFailsTheCall() async throws {
        try await withServerSession({ $0.responseInterceptors = [Unwrap()] }) { session, _ in
            let user = try await session.send(
                Request<[String: String]>.get("/echo", query: ["name": "ada", "code": "0"])
            ).value
            #expect(user == ["name": "ada"])
            let error = await courierError {
                _ = try await session.send(Request<[String: String]>.get("/echo", query: ["code": "7"]))
            }
            #expect(error?.code == .validation && error?.keyPath == "code")
        }
    }

    @Test func theSessionsInterceptorsRunBeforeTheRequestsOwnInOrder() async throws {
        try await withServerSession({ $0.responseInterceptors = [Mark(mark: "-a"), Mark(mark: "-b")] }) { session, _ in
            let text = try await session.send(Request<String>.get("/status/200").intercepting(Mark(mark: "-c"))).value
            #expect(text == "status 200-a-b-c")
        }
    }

    @Test func anInterceptorAnswersWithoutTheNetworkAndTheValidatorsStillJudge() async throws {
        try await withServerSession({ $0.responseInterceptors = [Offline(), Mark(mark: "!")] }) { session, server in
            let stub = try await session.send(Request<String>.get("/offline/200")).value
            #expect(stub == "stub!")
            // The session's interceptors are asked first: the request's own would answer only after them.
            let first = try await session.send(Request<String>.get("/offline/200").intercepting(Offline(body: "own")))
            #expect(first.value == "stub!")
            let error = await courierError { _ = try await session.send(Request<String>.get("/offline/404")) }
            #expect(error?.status?.code == 404)
            #expect(server.hits("*") == 0, "no request reached the server")
            #expect(await session.pool.isEmpty)
        }
    }

    @Test func theCacheKeepsTheAnswerAsSentAndAHitIsInterceptedAgain() async throws {
        let unwrap = Unwrap()
        let cache = ResponseCache()
        try await withServerSession({
            $0.responseInterceptors = [unwrap]
            $0.cache = cache
        }) { session, server in
            let request = Request<[String: String]>.get("/echo", query: ["name": "ada"]).cachePolicy(
                .cacheElseNetwork(ttl: .seconds(60))
            )
            #expect(try await session.send(request).value == ["name": "ada"])
            let again = try await session.send(request)
            #expect(again.value == ["name": "ada"] && again.cacheInfo.isFromCache)
            #expect(server.hits("/echo") == 1 && unwrap.calls.withLock { $0 } == 2)
            let stored = try #require(await cache.entries().first)
            #expect(stored.bodyBytes > 40, "the stored body is the whole echo, not the unwrapped data")
        }
    }
}
