import Courier
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `/cache/NAME`: a JSON answer whose caching headers the query sets, for cache tests. Each answer carries
/// how many times the server produced a body for that path (`served`), so a test sees fresh from cached.
///
/// Query: `cache-control`, `expires` (seconds from now, or `invalid`), `etag` (default `"v1"`, `none` for
/// none), `last-modified` (seconds ago, default 3600, `none`), `vary` (a header name; its value is echoed),
/// `age`, `date-ago` (seconds the `Date` lies in the past), `status`, `fail-after` (answer 503 once that many bodies were served), `type` (Content-Type),
/// `delay` (ms to wait before answering a request that revalidates, one with `If-None-Match` or `If-Modified-Since`),
/// `wait` (ms to wait before answering any request: a slow origin), `headers` (`Name:Value|Name:Value`, sent as
/// they are, on every answer but a 304 unless `headers-on-304` is set).
/// A matching `If-None-Match` or `If-Modified-Since` gets a 304.
struct CacheRoute {
    let request: ServerRequest
    let state: ServerState
    let writer: ResponseWriter

    func serve() async throws {
        let now = Date()
        let etag = request.query["etag"] ?? "\"v1\""
        let lastModified =
            request.query["last-modified"] == "none"
            ? nil : HTTPDate.format(now.addingTimeInterval(-Double(request.int("last-modified") ?? 3600)))
        let date = now.addingTimeInterval(-Double(request.int("date-ago") ?? 0))
        var headers: [(String, String)] = [
            ("Content-Type", request.query["type"] ?? "application/json"), ("Date", HTTPDate.format(date)),
        ]
        if etag != "none" { headers.append(("ETag", etag)) }
        if let lastModified { headers.append(("Last-Modified", lastModified)) }
        if let control = request.query["cache-control"] { headers.append(("Cache-Control", control)) }
        if let expires = request.query["expires"] {
            headers.append(
                ("Expires", Int(expires).map { HTTPDate.format(now.addingTimeInterval(Double($0))) } ?? expires)
            )
        }
        if let vary = request.query["vary"] { headers.append(("Vary", vary)) }
        if let age = request.query["age"] { headers.append(("Age", age)) }
        let extra = (request.query["headers"] ?? "").split(separator: "|").compactMap { pair -> (String, String)? in
            guard let colon = pair.firstIndex(of: ":") else { return nil }
            return (String(pair[..<colon]), String(pair[colon...].dropFirst()))
        }

        if let wait = request.int("wait") { try await Task.sleep(for: .milliseconds(wait)) }
        let revalidates = request.header("If-None-Match") != nil || request.header("If-Modified-Since") != nil
        if revalidates, let delay = request.int("delay") { try await Task.sleep(for: .milliseconds(delay)) }
        let counter = "cache:" + request.path
        if let failAfter = request.int("fail-after"), state.counter(counter) >= failAfter {
            try await writer.respond(status: 503, text: "failing on purpose")
            return
        }
        let conditionalMatch =
            (etag != "none" && request.header("If-None-Match") == etag)
            || (request.header("If-None-Match") == nil && lastModified != nil
                && request.header("If-Modified-Since") == lastModified)
        if conditionalMatch {
            try await writer.respond(
                status: 304,
                headers: headers.filter { $0.0 != "Content-Type" }
                    + (request.query["headers-on-304"] != nil ? extra : [])
            )
            return
        }
        let bodies = state.increment(counter)
        let status = request.int("status") ?? 200
        if status == 206 { headers.append(("Content-Range", "bytes 0-9/100")) }
        let varied = request.query["vary"].flatMap { request.header($0) } ?? ""
        let body = "{\"path\":\"\(request.path)\",\"served\":\(bodies),\"varied\":\"\(varied)\"}"
        try await writer.respond(status: status, headers: headers + extra, body: ByteBuffer(string: body))
    }
}
