import Foundation
import HTTPTypes
import Logging

extension RequestExecutor {
    /// Adds the jar's cookies for the request's URL after any `Cookie` header it has of its own, when `handling`
    /// sends them.
    nonisolated(nonsending) func addCookies(to request: inout PreparedRequest, handling: CookieHandling) async {
        guard let jar = configuration.cookieJar, handling.contains(.send),
              let cookies = await jar.headerValue(for: request.url) else { return }
        // One field: HTTP/1.1 allows a single Cookie header (RFC 6265 §5.4), and HTTPFields' subscript would split it.
        let combined = (request.headers[values: .cookie] + [cookies]).joined(separator: "; ")
        request.headers[values: .cookie] = []
        request.headers.append(HTTPField(name: .cookie, value: combined))
    }

    /// Stores the response's `Set-Cookie` headers when `handling` stores them. A jar that cannot save keeps them in memory; the failure is
    /// logged rather than failing a request that succeeded.
    nonisolated(nonsending) func storeCookies(from responseHeaders: HTTPFields, for url: URL, handling: CookieHandling) async {
        guard let jar = configuration.cookieJar, handling.contains(.store) else { return }
        let headers = responseHeaders[values: .setCookie]
        guard !headers.isEmpty else { return }
        do {
            try await jar.store(setCookieHeaders: headers, from: url)
        } catch {
            configuration.logger.warning("\(error)")
        }
    }
}
