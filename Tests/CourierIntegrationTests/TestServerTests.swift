import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("The loopback server's own routes", .timeLimit(.minutes(1)))
struct TestServerTests {
    @Test func fileRouteHonoursRangesIfRangeAnd416() async throws {
        try await withServerSession({ $0.validators = [] }) { session, _ in
            let full = try await session.send(Request<Data>.get("/file/1000"))
            #expect(full.status == .ok && full.body == ServerFiles.data(count: 1000))
            let etag = try #require(full.headers[.eTag])
            #expect(full.headers[.lastModified] != nil && full.headers[.acceptRanges] == "bytes")

            let part = try await session.send(
                Request<Data>.get("/file/1000").header("Range", "bytes=100-199").header("If-Range", etag)
            )
            #expect(part.status == .partialContent)
            #expect(part.headers[.contentRange] == "bytes 100-199/1000")
            #expect(part.body == ServerFiles.data(offset: 100, count: 100))

            let changed = try await session.send(
                Request<Data>.get("/file/1000?etag=v2").header("Range", "bytes=100-").header("If-Range", etag)
            )
            #expect(changed.status == .ok && changed.body.count == 1000)

            let suffix = try await session.send(Request<Data>.get("/file/1000").header("Range", "bytes=-10"))
            #expect(suffix.body == ServerFiles.data(offset: 990, count: 10))

            let beyond = try await session.send(Request<Data>.get("/file/1000").header("Range", "bytes=1000-"))
            #expect(beyond.status.code == 416 && beyond.headers[.contentRange] == "bytes */1000")
        }
    }

    @Test func jsonRouteRevalidatesWithETag() async throws {
        try await withServerSession({ $0.validators = [] }) { session, server in
            let first = try await session.send(Request<Data>.get("/json?max-age=60"))
            #expect(first.headers[.cacheControl] == "max-age=60")
            let etag = try #require(first.headers[.eTag])
            let second = try await session.send(Request<Data>.get("/json?max-age=60").header("If-None-Match", etag))
            #expect(second.status == .notModified && second.body.isEmpty)
            #expect(server.hits("/json") == 2)
        }
    }

    @Test func multipartEchoDescribesEachPart() async throws {
        let boundary = "XyZ"
        let body =
            "--XyZ\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XyZ--\r\n"
        try await withServerSession { session, _ in
            let answer = try await session.send(
                Request<[String: ParameterValue]>
                    .post(
                        "/multipart",
                        body: .bytes(Data(body.utf8), contentType: "multipart/form-data; boundary=\(boundary)")
                    )
            )
            guard case .array(let items)? = answer.value["parts"] else {
                Issue.record("no parts")
                return
            }
            let parts = items.compactMap { item -> [String: ParameterValue]? in
                if case .object(let part) = item { part } else { nil }
            }
            #expect(parts.count == 2 && answer.value["receivedBytes"] == .int(body.utf8.count))
            #expect(parts[0]["name"] == "field" && parts[0]["length"] == 5)
            #expect(parts[1]["filename"] == "a.txt" && parts[1]["contentType"] == "text/plain")
        }
    }

    @Test func dripAndDelayTakeTheirTime() async throws {
        try await withServerSession { session, _ in
            let start = ContinuousClock.now
            let drip = try await session.send(Request<Data>.get("/drip?size=5&chunk=1&interval=50"))
            #expect(drip.body == ServerFiles.data(count: 5))
            #expect(start.duration(to: .now) >= .milliseconds(200))
        }
    }

    @Test func hitsAreCountedPerPath() async throws {
        try await withServerSession { session, server in
            for _ in 0..<3 { _ = try await session.send(Request<Data>.get("/small")) }
            #expect(server.hits("/small") == 3)
            #expect(server.totalHits == 3)
        }
    }
}
