import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import NIOCore
import Testing

@Suite("Requests against the loopback server")
struct RequestTests {
    struct NewUser: Codable, Sendable, Equatable {
        var name: String
        var age: Int
    }

    @Test func getWithQueryDefaultsAndHeaders() async throws {
        try await withServerSession({
            $0.defaultParameters = ["device": "linux"]
            $0.defaultHeaders[.authorization] = "Bearer token-1"
            $0.defaultHeaders[HTTPField.Name("X-App")!] = "courier"
        }) { session, server in
            let request = Request<Echo>.get("/echo", query: ["page": 2]).header("X-App", "override")
            let response = try await session.send(request)
            #expect(response.status == .ok)
            #expect(response.value.method == "GET")
            #expect(response.value.query == ["page": "2", "device": "linux"])
            #expect(response.value.header("authorization") == "Bearer token-1")
            #expect(response.value.headers["x-app"] == ["override"])
            #expect(response.isFromCache == false)
            #expect(response.timing.timeToFirstByte != nil && response.timing.total >= response.timing.timeToFirstByte!)
        }
    }

    /// `Courier.version` is the newest release the changelog names, so the two cannot drift apart.
    @Test func theVersionIsTheChangelogsNewestRelease() throws {
        let changelog = try String(
            contentsOf: URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../CHANGELOG.md"),
            encoding: .utf8
        )
        let released = changelog.split(separator: "\n").first {
            $0.hasPrefix("## ") && $0.first(where: \.isNumber) != nil
        }
        #expect(released?.hasPrefix("## \(Courier.version) ") == true, "newest release heading: \(released ?? "none")")
        #expect(released?.hasPrefix("## \(CourierRelease.version) ") == true, "CourierRelease names the same release")
    }

    /// Every session names itself `courier/VERSION` unless its configuration says otherwise.
    @Test func theDefaultUserAgentNamesCourierAndCanBeChanged() async throws {
        try await withServerSession { session, _ in
            let echo = try await session.send(Request<Echo>.get("/echo")).value
            #expect(
                echo.header("user-agent") == "courier/\(Courier.version)" && CourierRelease.userAgent == "courier/0.1.0"
            )
            let own = try await session.send(Request<Echo>.get("/echo").header("User-Agent", "mine/1")).value
            #expect(own.header("user-agent") == "mine/1")
        }
        try await withServerSession({ $0.defaultHeaders[.userAgent] = nil }) { session, _ in
            let echo = try await session.send(Request<Echo>.get("/echo")).value
            #expect(echo.header("user-agent") == nil)
        }
    }

    @Test func jsonInJsonOut() async throws {
        try await withServerSession { session, _ in
            let echo = try await session.send(Request<Echo>.post("/echo", body: .json(NewUser(name: "ada", age: 36))))
                .value
            #expect(echo.header("content-type") == "application/json")
            #expect(try JSONDecoder().decode(NewUser.self, from: Data(echo.body.utf8)) == NewUser(name: "ada", age: 36))
            let dictionary = try await session.send(
                Request<Echo>.put("/echo", body: .json(["a": 1, "b": ["c": true]]))
            ).value
            #expect(dictionary.body == #"{"a":1,"b":{"c":true}}"#)
        }
    }

    @Test func parametersGoToTheBodyWithTheChosenSerializer() async throws {
        try await withServerSession({ $0.defaultParameters = ["v": 1] }) { session, _ in
            let form = try await session.send(Request<Echo>.post("/echo", parameters: ["q": "a b"])).value
            #expect(form.body == "q=a%20b&v=1")
            #expect(form.header("content-type") == "application/x-www-form-urlencoded")
            var json = Request<Echo>.patch("/echo", parameters: ["q": "x"])
            json.parameterEncoding = .json
            let body = try await session.send(json).value
            #expect(body.body == #"{"q":"x","v":1}"#)
            #expect(body.method == "PATCH")
            let delete = try await session.send(Request<Echo>.delete("/echo", query: ["id": 3])).value
            #expect(delete.query == ["id": "3", "v": "1"] && delete.method == "DELETE")
            // A body of the request's own keeps its bytes: the default parameters go to the query, as documented.
            let own = try await session.send(Request<Echo>.post("/echo", body: .json(["a": 1]))).value
            #expect(own.body == #"{"a":1}"# && own.query == ["v": "1"])
        }
    }

    @Test func headOptionsAndRawBodies() async throws {
        try await withServerSession { session, server in
            let head = try await session.send(Request<Data>.head("/bytes/1000"))
            #expect(head.body.isEmpty && head.headers[.contentLength] == "1000")
            let options = try await session.send(Request<Echo>.options("/echo")).value
            #expect(options.method == "OPTIONS")
            let bytes = try await session.send(Request<Data>.get("/bytes/100000")).value
            #expect(bytes == ServerFiles.data(count: 100_000))
            let chunked = try await session.send(Request<Data>.get("/bytes/70000?chunked=1")).value
            #expect(chunked == ServerFiles.data(count: 70_000))
            let text = try await session.send(Request<String>.post("/echo", body: .text("héllo"))).value
            #expect(text.contains("héllo"))
        }
    }

    @Test func fileAndStreamBodies() async throws {
        let file = FileManager.default.temporaryDirectory.appending(path: "courier-body-\(UUID().uuidString)")
        let content = ServerFiles.data(count: 300_000)
        try content.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try await withServerSession { session, _ in
            let fromFile = try await session.send(Request<Echo>.put("/echo", body: .file(file))).value
            #expect(fromFile.bodyLength == 300_000)
            #expect(fromFile.header("content-length") == "300000")
            let chunks = AsyncStream<ByteBuffer> { continuation in
                for index in 0..<3 { continuation.yield(ByteBuffer(string: "part\(index);")) }
                continuation.finish()
            }
            let streamed = try await session.send(Request<Echo>.post("/echo", body: .stream(chunks))).value
            #expect(streamed.body == "part0;part1;part2;")
        }
    }

    @Test func missingBodyFileIsAClearErrorAndNothingIsSent() async throws {
        try await withServerSession { session, server in
            let error = await courierError {
                _ = try await session.send(Request<Data>.post("/echo", body: .file(URL(filePath: "/nonexistent/file"))))
            }
            #expect(error?.code == .unreadableBody)
            #expect(server.totalHits == 0)
        }
    }

    @Test func servicesAndRequestBaseURLs() async throws {
        try await withTestServer { server in
            let config = Configuration {
                $0.baseURL = URL(string: "http://127.0.0.1:1")  // nothing listens there
                $0.services["echo"] = server.url("/")
            }
            try await withSession(config) { session in
                let viaService = try await session.send(Request<Echo>.get("/echo").service("echo")).value
                #expect(viaService.path == "/echo")
                let viaBase = try await session.send(Request<Echo>.get("/echo").baseURL(server.baseURL)).value
                #expect(viaBase.path == "/echo")
                let absolute = try await session.send(Request<Echo>.get(server.url("/echo?x=1").absoluteString)).value
                #expect(absolute.query == ["x": "1"])
            }
        }
    }

    @Test func rawRequestsSkipDefaultsAndAdapters() async throws {
        try await withServerSession({
            $0.defaultHeaders[.authorization] = "Bearer default"
            $0.defaultParameters = ["d": 1]
            $0.adapters = [QueryParametersAdapter(["adapted": true])]
        }) { session, server in
            let raw = try await session.send(Request<Echo>.get(server.url("/echo").absoluteString).raw()).value
            #expect(raw.query.isEmpty)
            #expect(raw.header("authorization") == nil)
            let relative = await courierError { _ = try await session.send(Request<Echo>.get("/echo").raw()) }
            #expect(relative?.code == .invalidURL)
        }
    }

    @Test func typedEndpointsGroupedAsStaticMembers() async throws {
        try await withServerSession { session, _ in
            let echo = try await session.send(.echoed(name: "grace"))
            #expect(echo.value.query["name"] == "grace")
            let mapped = try await session.send(Request<Echo>.get("/echo").map(\.method))
            #expect(mapped.value == "GET")
            let decoded = try await session.send(Request<Data>.get("/json")).decode([String: ParameterValue].self)
            #expect(decoded["name"] == "courier")
        }
    }

    @Test func sessionShutdownRejectsLaterRequests() async throws {
        try await withTestServer { server in
            let session = Session(configuration: Configuration { $0.baseURL = server.baseURL })
            _ = try await session.send(Request<Data>.get("/small"))
            try await session.shutdown()
            let error = await courierError { _ = try await session.send(Request<Data>.get("/small")) }
            #expect(error?.code == .sessionClosed)
        }
    }

    @Test func configurationChangesApplyToLaterRequests() async throws {
        try await withServerSession { session, _ in
            await session.updateConfiguration { $0.defaultHeaders[.authorization] = "Bearer after-login" }
            let echo = try await session.send(Request<Echo>.get("/echo")).value
            #expect(echo.header("authorization") == "Bearer after-login")
        }
    }

    @Test func blockingCallFromAThreadOfItsOwn() async throws {
        try await withServerSession { session, _ in
            let result = await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    let outcome = Result { try session.sendBlocking(Request<String>.get("/small")) }
                    continuation.resume(returning: outcome.map(\.value.count))
                }
            }
            let count = try result.get()
            #expect(count == 1024)
        }
    }
}

extension Request where Response == Echo {
    /// An endpoint defined once and used by name, as HLNetworking's API center did.
    static func echoed(name: String) -> Self { .get("/echo", query: ["name": .string(name)]) }
}
