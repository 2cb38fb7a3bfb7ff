import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Testing

/// Settings that travel through the session to the wire or to the user's hooks, checked over real sockets: the
/// units that compute them are tested on their own, these check that the session uses them.
@Suite("Session wiring", .timeLimit(.minutes(1)))
struct SessionWiringTests {
    @Test func parameterAdaptersChangeTheParametersBeforeTheyAreEncoded() async throws {
        struct Refused: Error {}
        let seen = Locked<[String]>([])
        try await withServerSession({
            $0.defaultParameters = ["app": "courier", "empty": ""]
            $0.parameterAdapters = [
                ClosureParameterAdapter { parameters, method, path in
                    seen.withLock { $0.append("\(method) \(path)") }
                    if path == "/refused" { throw Refused() }
                    return parameters.filter { $0.value != "" }
                },
                ClosureParameterAdapter { parameters, _, _ in
                    var signed = parameters
                    signed["sig"] = .string(parameters.keys.sorted().joined(separator: "+"))
                    return signed
                },
            ]
        }) { session, _ in
            var search = Request<Echo>.get("/echo")
            search.parameters = ["q": "swift"]
            let get = try await session.send(search).value
            #expect(get.query == ["app": "courier", "q": "swift", "sig": "app+q"])
            let post = try await session.send(Request<Echo>.post("/echo", parameters: ["name": "ada"])).value
            #expect(post.body.split(separator: "&").sorted() == ["app=courier", "name=ada", "sig=app%2Bname"])
            var raw = Request<Echo>.get(
                session.currentConfiguration.baseURL?.appending(path: "echo").absoluteString ?? ""
            )
            raw.isRaw = true
            #expect(try await session.send(raw).value.query.isEmpty)  // raw requests skip them
            let error = await #expect(throws: CourierError.self) {
                try await session.send(Request<Data>.get("/refused"))
            }
            #expect(error?.code == .encoding)
            #expect(seen.withLock { $0 } == ["GET /echo", "POST /echo", "GET /refused"])
        }
    }

    @Test func theCDNIgnoringTheBaseAndPerRequestVersionsReachTheWire() async throws {
        try await withTestServer { server in
            let configuration = Configuration {
                $0.baseURL = server.url("/echo/base")
                $0.cdnURL = server.url("/echo/cdn")
                $0.apiVersion = "v1"
            }
            try await withSession(configuration) { session in
                func path(_ request: Request<Echo>) async throws -> String {
                    try await session.send(request).value.path
                }
                let plain = try await path(.get("/items"))
                #expect(plain == "/echo/base/v1/items")

                var viaCDN = Request<Echo>.get("/items")
                viaCDN.usesCDN = true
                let cdn = try await path(viaCDN)
                #expect(cdn == "/echo/cdn/v1/items")

                var otherVersion = Request<Echo>.get("/items")
                otherVersion.apiVersion = "v9"
                let versioned = try await path(otherVersion)
                #expect(versioned == "/echo/base/v9/items")

                var ignoring = Request<Echo>.get(server.url("/echo/elsewhere").absoluteString)
                ignoring.ignoresBaseURL = true
                let absolute = try await path(ignoring)
                #expect(absolute == "/echo/elsewhere")
                var relativeIgnoring = Request<Echo>.get("/items")
                relativeIgnoring.ignoresBaseURL = true
                let refused = await courierError { _ = try await session.send(relativeIgnoring) }
                #expect(refused?.code == .invalidURL)
                #expect(server.hits("/echo/base/v1/items") == 1, "the refused request left nothing on the wire")
            }
        }
    }

    /// Records the `userInfo` value each hook saw.
    final class Seen: EventMonitor, ResponseValidator {
        let values = Locked<[String]>([])
        func note(_ where: String, _ request: PreparedRequest) {
            values.withLock { $0.append("\(`where`)=\(request.userInfo["trace"] as? String ?? "none")") }
        }
        func willSend(_ request: PreparedRequest) { note("monitor", request) }
        func validate(_ response: ResponseBody, for request: PreparedRequest) -> ValidationResult {
            note("validator", request)
            return .accept
        }
    }

    @Test func userInfoReachesAdaptersValidatorsAndMonitors() async throws {
        let seen = Seen()
        let adapter = ClosureAdapter { request in
            seen.note("adapter", request)
            return request
        }
        try await withServerSession({
            $0.adapters = [adapter]
            $0.monitors = [seen]
            $0.validators = [seen]
        }) { session, _ in
            var request = Request<Data>.get("/small")
            request.userInfo["trace"] = "t-1"
            _ = try await session.send(request)
        }
        #expect(seen.values.withLock { $0 } == ["adapter=t-1", "monitor=t-1", "validator=t-1"])
    }

    @Test func userInfoReachesThePoolsEntries() async throws {
        try await withServerSession { session, _ in
            var request = Request<Data>.get("/delay/2000")
            request.userInfo["trace"] = "t-2"
            let running = Task { try await session.send(request) }
            await eventually("the request is in the pool") { await !session.pool.snapshot().isEmpty }
            let entry = try #require(await session.pool.snapshot().first)
            #expect(entry.userInfo["trace"] as? String == "t-2")
            await session.pool.cancelAll()
            _ = await running.result
        }
    }
}

@Suite("Basic authentication", .timeLimit(.minutes(1)))
struct BasicAuthTests {
    @Test func basicAuthReachesTheServerAndStaysOutOfExports() async throws {
        try await withServerSession { session, _ in
            let request = try Request<Echo>.get("/echo").header("Authorization", "Bearer old").basicAuth(
                user: "ada",
                password: "s3cret pass"
            )
            let response = try await session.send(request)
            #expect(
                response.value.header("authorization") == "Basic " + Data("ada:s3cret pass".utf8).base64EncodedString()
            )
            #expect(
                response.value.headers["authorization"]?.count == 1,
                "the earlier value is replaced, not kept beside it"
            )
            let exported = response.request.curlCommand
            #expect(!exported.contains("YWRh") && !exported.contains("s3cret"), "\(exported)")
        }
        let colon = #expect(throws: CourierError.self) {
            _ = try Request<Data>.get("/x").basicAuth(user: "a:b", password: "p")
        }
        #expect(colon?.code == .invalidHeader)
        let control = #expect(throws: CourierError.self) {
            _ = try Request<Data>.get("/x").basicAuth(user: "a", password: "p\r\nX: 1")
        }
        #expect(control?.code == .invalidHeader && control?.description.contains("p\r\n") == false)
    }
}
