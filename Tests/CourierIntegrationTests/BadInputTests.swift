import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Logging
import Testing

@Suite("Bad input never sends", .timeLimit(.minutes(1)))
struct BadInputTests {
    @Test(arguments: [
        ("X-Evil", "a\r\nX-Injected: 1"), ("X-Evil", "a\nb"), ("X-Evil", "nul\u{0}"), ("X-Evil\r\nX-Injected", "1"),
        ("Bad Name", "v"), ("X-Evil", "bell\u{7}"),
    ])
    func headerInjectionIsRejectedBeforeAnyByteLeaves(name: String, value: String) async throws {
        try await withServerSession { session, server in
            let error = await courierError {
                _ = try await session.send(Request<Data>.get("/echo").header(name, value))
            }
            #expect(error?.code == .invalidHeader)
            #expect(error?.description.contains("\r") == false && error?.description.contains("\n") == false)
            try await Task.sleep(for: .milliseconds(50))
            #expect(server.totalHits == 0)
        }
    }

    @Test(arguments: ["/a b", "/x\r\nHost: evil", "http://", "ftp://127.0.0.1/x", "http://exa mple.com/"])
    func malformedURLsAreRejectedWithTheOffendingString(_ path: String) async throws {
        try await withServerSession { session, server in
            let error = await courierError { _ = try await session.send(Request<Data>.get(path)) }
            #expect(error?.code == .invalidURL)
            #expect(server.totalHits == 0)
        }
    }

    @Test func anEncodableThatThrowsIsAnEncodingError() async throws {
        struct Unencodable: Encodable, Sendable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "no"))
            }
        }
        try await withServerSession { session, server in
            let error = await courierError {
                _ = try await session.send(Request<Data>.post("/echo", body: .json(Unencodable())))
            }
            #expect(error?.code == .encoding)
            #expect(server.totalHits == 0)
        }
    }

    @Test func decodingErrorsNameTheKeyPath() async throws {
        struct Wrong: Decodable, Sendable { var name: Int }
        try await withServerSession { session, _ in
            let error = await courierError { _ = try await session.send(Request<Wrong>.get("/json")) }
            #expect(error?.code == .decoding)
            #expect(error?.message.contains("name") == true)
        }
    }

    @Test func secretsNeverReachTheLog() async throws {
        let logs = CapturedLogs()
        try await withServerSession({
            $0.logger = logs.logger()
            $0.debugLogging = true
            $0.defaultHeaders[.authorization] = "Bearer top-secret-1"
            $0.defaultHeaders[.cookie] = "sid=top-secret-2"
        }) { session, _ in
            let request = Request<Data>.post("/echo", body: .json(["password": "top-secret-3", "user": "ada"]))
                .query(["token": "top-secret-4"])
            _ = try await session.send(request)
            _ = await courierError { _ = try await session.send(Request<Data>.get("/status/500?token=top-secret-5")) }
        }
        let text = logs.all
        #expect(text.contains("→ POST"))
        #expect(text.contains("← 200"))
        #expect(text.contains("\"user\":\"ada\""))
        for secret in 1...5 { #expect(!text.contains("top-secret-\(secret)"), "secret \(secret) leaked") }
    }
}
