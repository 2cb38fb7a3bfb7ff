import Courier
import CourierTesting
import Foundation
import NIOCore
import Testing

@Suite("The cookie jar in a session")
struct CookieTests {
    @Test func responsesFillTheJarAndLaterRequestsCarryItsCookies() async throws {
        let jar = try CookieJar()
        try await withServerSession({ $0.cookieJar = jar }) { session, _ in
            _ = try await session.send(Request<Data>.get("/set-cookies", query: ["theme": "dark", "lang": "en"]))
            let echo = try await session.send(Request<Echo>.get("/echo").header("Cookie", "own=1")).value
            #expect(echo.header("cookie") == "own=1; lang=en; theme=dark")
            #expect(await jar.cookies(named: "theme").first?.value == "dark")
        }
    }

    @Test func theWirePathFollowsRFC6265sAlgorithm() async throws {
        // A few of the step tests' cases, sent by a real server and read back from what it received.
        let jar = try CookieJar()
        try await withServerSession({ $0.cookieJar = jar }) { session, server in
            let lines = [
                "z=y", "a=b", "foo=bar, baz=qux", "d=1; Domain=other.com; Domain=\(server.baseURL.host()!)",
                "dropped=1; Domain=\(server.baseURL.host()!); Domain=other.com", "u=été",
                "old=1; Expires=Sat, 15-Apr-17 91:22:33 21:01:22",
            ]
            let query = Parameters(
                uniqueKeysWithValues: lines.enumerated().map { (String($0.offset + 1), .string($0.element)) }
            )
            _ = try await session.send(Request<Data>.get("/set-cookie-lines", query: query))
            let echo = try await session.send(Request<Echo>.get("/echo")).value
            #expect(echo.header("cookie") == "z=y; a=b; foo=bar, baz=qux; d=1; u=été; old=1")
            // The unparseable date left "old" a session cookie rather than taking the second time.
            #expect(await jar.cookies(named: "old").first?.expires == nil)
        }
    }

    @Test func cookiesSetByARedirectGoWithTheRedirectedRequest() async throws {
        let jar = try CookieJar()
        try await withServerSession({ $0.cookieJar = jar }) { session, _ in
            let echo = try await session.send(
                Request<Echo>.get("/set-cookies", query: ["step": "1", "location": "/echo"])
            ).value
            #expect(echo.path == "/echo")
            #expect(echo.header("cookie") == "step=1")
        }
    }

    @Test func handlingCanBeTurnedOffEachWay() async throws {
        let jar = try CookieJar()
        try await withServerSession({
            $0.cookieJar = jar
            $0.cookieHandling = [.send]
        }) { session, server in
            _ = try await session.send(Request<Data>.get("/set-cookies", query: ["a": "1"]))
            #expect(await jar.all.isEmpty)
            try await jar.set(Cookie(name: "manual", value: "x", domain: server.baseURL.host()!))
            let echo = try await session.send(Request<Echo>.get("/echo")).value
            #expect(echo.header("cookie") == "manual=x")
        }
        try await withServerSession({
            $0.cookieJar = jar
            $0.cookieHandling = [.store]
        }) { session, _ in
            let echo = try await session.send(Request<Echo>.get("/echo")).value
            #expect(echo.header("cookie") == nil)
        }
    }

    @Test func aRequestCanHandleCookiesOtherwiseThanTheSession() async throws {
        let jar = try CookieJar()
        try await withServerSession({ $0.cookieJar = jar }) { session, server in
            _ = try await session.send(Request<Data>.get("/set-cookies", query: ["kept": "no"]).cookies([]))
            #expect(await jar.all.isEmpty)  // not stored
            _ = try await session.send(Request<Data>.get("/set-cookies", query: ["only": "sent"]).cookies(.send))
            #expect(await jar.all.isEmpty)
            try await jar.set(Cookie(name: "manual", value: "x", domain: server.baseURL.host()!))
            // not sent
            #expect(try await session.send(Request<Echo>.get("/echo").cookies([])).value.header("cookie") == nil)
            #expect(try await session.send(Request<Echo>.get("/echo").cookies(.store)).value.header("cookie") == nil)
            // the session's way
            #expect(try await session.send(Request<Echo>.get("/echo")).value.header("cookie") == "manual=x")
            _ = try await session.send(Request<Data>.get("/set-cookies", query: ["stored": "1"]).cookies(.store))
            #expect(await jar.cookies(named: "stored").first?.value == "1")
            let streamed = try await session.stream(Request<Data>.get("/echo").cookies([]))
            var body = Data()
            for try await chunk in streamed.body { body.append(contentsOf: chunk.readableBytesView) }
            #expect(try JSONDecoder().decode(Echo.self, from: body).header("cookie") == nil)
        }
    }

    @Test func setGetDeleteAndPersistenceAcrossJars() async throws {
        let file = try newTemporaryDirectory(prefix: "courier-cookies").appending(path: "jar.json")
        let jar = try CookieJar(file: file)
        try await jar.set(Cookie(name: "session", value: "s1", domain: ".Example.com", hostOnly: false))
        try await jar.set(Cookie(name: "session", value: "s2", domain: "other.org"))
        try await jar.set(
            Cookie(name: "old", value: "x", domain: "example.com", expires: Date().addingTimeInterval(-1))
        )
        try await jar.store(
            setCookieHeaders: ["pref=1; Max-Age=3600; SameSite=Strict; HttpOnly"],
            from: URL(string: "https://example.com/a")!
        )

        let reopened = try CookieJar(file: file)
        #expect(await reopened.all.count == 3)
        #expect(await reopened.cookies(named: "session", domain: "example.com").map(\.value) == ["s1"])
        let pref = try #require(await reopened.cookies(named: "pref").first)
        #expect(pref.sameSite == .strict && pref.httpOnly && pref.expires != nil)
        #expect(await reopened.headerValue(for: URL(string: "https://www.example.com/")!) == "session=s1")
        #expect(try await reopened.delete(named: "session", domain: ".example.com") == 1)
        #expect(try await CookieJar(file: file).cookies(named: "session").map(\.domain) == ["other.org"])
        try await reopened.deleteAll()
        #expect(try await CookieJar(file: file).all.isEmpty)
    }

    @Test func unsafeCookiesAndCorruptJarsAreTypedErrors() async throws {
        let jar = try CookieJar()
        for bad in [
            Cookie(name: "a;b", value: "1", domain: "h"), Cookie(name: "a", value: "1\r\nX: y", domain: "h"),
            Cookie(name: "", value: "", domain: "h"), Cookie(name: "a", value: "1", domain: ""),
            Cookie(name: "a=b", value: "1", domain: "h"),
        ] {
            await #expect(throws: CourierError.self) { try await jar.set(bad) }
        }
        #expect(await jar.all.isEmpty)
        let file = try newTemporaryDirectory(prefix: "courier-cookies").appending(path: "jar.json")
        try Data("not json".utf8).write(to: file)
        #expect(throws: CourierError.self) { try CookieJar(file: file) }
        #expect(try String(contentsOf: file, encoding: .utf8) == "not json")  // left as it was
    }

    /// curl's way: `-c` saves the cookies to a file, `-b` sends them from it on the next run; a file of other
    /// text holds no cookies (its lines are skipped, as curl skips them).
    @Test func theCLIKeepsCookiesInAJarFileBetweenRuns() async throws {
        let jar = try newTemporaryDirectory(prefix: "courier-cookies").appending(path: "cookies.txt").path(
            percentEncoded: false
        )
        try await withTestServer { server in
            let first = try await CLI.run([
                "get", server.url("/set-cookies?user=ada").absoluteString, "--cookie-jar", jar,
            ])
            #expect(first.status == 0, "\(first.stderr)")
            let second = try await CLI.run(["get", server.url("/echo").absoluteString, "-b", jar])
            #expect(second.stdout.contains(#""cookie":["user=ada"]"#), "\(second.stdout)")
            try Data("[{".utf8).write(to: URL(filePath: jar))
            let other = try await CLI.run(["get", server.url("/echo").absoluteString, "-b", jar])
            #expect(other.status == 0 && !other.stdout.contains("cookie"), "\(other.stdout)")
        }
    }
}
