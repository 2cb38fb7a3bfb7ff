import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import Logging
import Testing

/// The session's log: each message carries the call's facts as structured metadata, and a condition that repeats
/// on every request is logged once, then at a bounded rate.
@Suite("Structured logging")
struct LoggingTests {
    @Test func everyMessageOfACallCarriesItsFactsAsMetadata() async throws {
        let logs = CapturedLogs()
        try await withServerSession({
            $0.logger = logs.logger()
            $0.debugLogging = true
            $0.retryPolicy = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1))
        }) { session, server in
            _ = try await session.send(Request<Data>.get("/small"))
            _ = try await session.send(Request<Data>.get("/flaky/logging?failures=1&status=503"))
            let events = logs.events.filter { $0.level == .debug }
            let ids = Set(events.compactMap { $0.metadata["courier.request.id"] })
            #expect(ids.count == 2, "one id per call, the same on each of its messages: \(ids)")
            let answered = try #require(events.first { $0.metadata["http.response.status_code"] == "200" })
            #expect(answered.metadata["http.request.method"] == "GET")
            #expect(answered.metadata["server.address"] == "127.0.0.1")
            #expect(answered.metadata["url.full"] == server.url("/small").absoluteString)
            #expect(answered.metadata["courier.duration"] != nil)
            let retry = try #require(events.first { $0.message == "retrying" })
            #expect(retry.metadata["courier.attempt"] == "2" && retry.metadata["error.type"] == "503")
        }
    }

    @Test func aCookieJarThatCannotBeWrittenIsLoggedOnceNotOnEveryRequest() async throws {
        let logs = CapturedLogs()
        let missing = FileManager.default.temporaryDirectory.appending(path: "courier-no-such-\(UUID().uuidString)")
        let jar = try CookieJar(file: missing.appending(path: "cookies.json"))
        try await withServerSession({
            $0.logger = logs.logger()
            $0.cookieJar = jar
        }) { session, _ in
            for index in 0..<5 {
                _ = try await session.send(Request<Data>.get("/set-cookies?n\(index)=\(index)"))
            }
        }
        let warnings = logs.events.filter { $0.level == .warning }
        #expect(warnings.count == 1, "\(warnings.map(\.message))")
        #expect(warnings.first?.metadata["courier.component"] == "cookie-jar")
        #expect(await jar.all.count == 5, "the cookies are kept in memory all the same")
    }
}
