import Courier
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// curl's `-b` and `-c`: cookies sent as written or read from a cookie file, and every cookie saved to a file,
/// both in curl's Netscape format (``NetscapeCookieFile``), so curl and courier can share one.
enum CurlCookies {
    /// Sets `configuration` up for `-b cookie` and `-c jar`: `-b` with an `=` is a `Cookie` header sent as it is;
    /// otherwise it names a file whose cookies start the session's jar (a missing file holds none, as in curl).
    /// `-c` makes the jar save itself to `jar`.
    static func apply(cookie: String?, jar: String?, to configuration: inout Configuration) throws {
        var cookies: [Cookie] = []
        let file = cookie.flatMap { $0.contains("=") ? nil : $0 }
        if let cookie, file == nil {
            configuration.defaultHeaders[.cookie] = try UsageError.parsing("-b") {
                try HeaderValidation.field(name: "Cookie", value: cookie)
            }.value
        }
        if let file { cookies = try read(file) }
        guard file != nil || jar != nil else { return }
        configuration.cookieJar = try UsageError.parsing("-c") {
            try CookieJar(cookies: cookies, savingTo: jar.map { URL(filePath: $0) }, format: .netscape)
        }
    }

    /// The cookies in the file at `path`; none when there is no such file, an ``InputFailure`` when it cannot be
    /// read.
    private static func read(_ path: String) throws -> [Cookie] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        try CommandLineInput.checkReadable(path)
        return NetscapeCookieFile.cookies(in: try CommandLineInput.readText(path))
    }
}
