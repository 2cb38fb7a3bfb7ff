import Courier
import Foundation
import Testing

@Suite("curl's cookie file, read and written")
struct NetscapeCookieFileTests {
    @Test func readsWhatCurlWrites() throws {
        let text = """
            # Netscape HTTP Cookie File
            # https://curl.se/docs/http-cookies.html

            127.0.0.1\tFALSE\t/\tFALSE\t0\ta\t1
            .example.com\tTRUE\t/api\tTRUE\t4102444800\tsession\tabc\r
            #HttpOnly_example.com\tFALSE\t/\tFALSE\t0\tsecret\ts
            example.org\tFALSE\t/\tFALSE\t0\tempty
            not a cookie line
            example.net\tFALSE\t/\tFALSE\tsoon\tbad\texpiry
            """
        let cookies = NetscapeCookieFile.cookies(in: text)
        #expect(cookies.map(\.name) == ["a", "session", "secret", "empty"])
        #expect(cookies[0].domain == "127.0.0.1" && cookies[0].hostOnly && cookies[0].expires == nil)
        #expect(cookies[1].domain == "example.com" && !cookies[1].hostOnly && cookies[1].secure)
        #expect(cookies[1].path == "/api" && cookies[1].value == "abc")
        #expect(cookies[1].expires == Date(timeIntervalSince1970: 4_102_444_800))
        #expect(cookies[2].httpOnly && cookies[3].value == "")
    }

    @Test func writesWhatItReads() {
        let cookies = [
            Cookie(name: "a", value: "1", domain: "127.0.0.1"),
            Cookie(
                name: "s",
                value: "x",
                domain: "example.com",
                hostOnly: false,
                path: "/api",
                expires: Date(timeIntervalSince1970: 4_102_444_800),
                secure: true,
                httpOnly: true
            ),
        ]
        let text = NetscapeCookieFile.text(of: cookies)
        #expect(text.hasPrefix(NetscapeCookieFile.header))
        #expect(text.contains("\n127.0.0.1\tFALSE\t/\tFALSE\t0\ta\t1\n"))
        #expect(text.contains("\n#HttpOnly_.example.com\tTRUE\t/api\tTRUE\t4102444800\ts\tx\n"))
        let read = NetscapeCookieFile.cookies(in: text)
        #expect(read.map(\.name) == ["a", "s"] && read[1].httpOnly && !read[1].hostOnly && read[1].secure)
    }

    /// A jar started from cookies saves them in curl's format at once, and again on every change.
    @Test func aJarSavesItselfInCurlsFormat() async throws {
        let file = FileManager.default.temporaryDirectory.appending(path: "courier-netscape-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        let jar = try CookieJar(
            cookies: [
                Cookie(name: "a", value: "1", domain: "example.com"), Cookie(name: "bad;", value: "", domain: "x"),
            ],
            savingTo: file,
            format: .netscape
        )
        #expect(NetscapeCookieFile.cookies(in: try String(contentsOf: file, encoding: .utf8)).map(\.name) == ["a"])
        try await jar.set(Cookie(name: "b", value: "2", domain: "example.com"))
        #expect(
            NetscapeCookieFile.cookies(in: try String(contentsOf: file, encoding: .utf8)).map(\.name) == ["a", "b"]
        )
    }
}
