import HTTPTypes
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One entry of a HAR 1.2 log (W3C's draft "HTTP Archive (HAR) format", version 1.2): one request and its answer
/// (a redirect a call followed, or its final request), its timings, the server's address and the connection's
/// number, with secrets redacted.
/// ``HARRecorder`` writes them; the names of the fields are the format's.
struct HAREntry: Encodable {
    struct NameValue: Encodable {
        var name: String
        var value: String
    }

    struct PostData: Encodable {
        var mimeType: String
        var text: String?
        var comment: String?
    }

    struct Request: Encodable {
        var method: String
        var url: String
        var httpVersion: String
        var cookies: [NameValue] = []
        var headers: [NameValue]
        var queryString: [NameValue]
        var postData: PostData?
        var headersSize = -1
        var bodySize: Int64
    }

    struct Content: Encodable {
        var size: Int
        var mimeType: String
        var text: String?
        var encoding: String?
        var comment: String?
    }

    struct Response: Encodable {
        var status: Int
        var statusText: String
        var httpVersion: String
        var cookies: [NameValue] = []
        var headers: [NameValue]
        var content: Content
        var redirectURL = ""
        var headersSize = -1
        var bodySize: Int
    }

    struct Cache: Encodable {}

    /// Milliseconds of each phase; -1 where a phase did not happen or has no figure.
    struct Timings: Encodable {
        var blocked: Double
        var dns = -1.0
        var connect: Double
        var send = 0.0
        var wait: Double
        var receive: Double
        var ssl = -1.0
    }

    var startedDateTime: String
    var time: Double
    var request: Request
    var response: Response
    var cache = Cache()
    var timings: Timings
    var serverIPAddress: String?
    var connection: String?
    /// Why the call failed, when it did (a custom field: HAR's start with an underscore).
    var _error: String?
    /// `websocket` for a WebSocket's handshake, as browsers mark it.
    var _resourceType: String?
    /// A WebSocket's messages, as Chrome writes them.
    var _webSocketMessages: [WebSocketMessageEntry]?
    /// How many of a WebSocket's messages the call did not keep (see ``DebugMessage/webSocketMessagesLeftOut``).
    var _webSocketMessagesLeftOut: Int?

    /// One WebSocket message in Chrome's form: `send` or `receive`, seconds since 1970, opcode 1 (text) or 2
    /// (binary, its data in base64).
    struct WebSocketMessageEntry: Encodable {
        var type: String
        var time: Double
        var opcode: Int
        var data: String
    }

    /// The entries of `message`: one for each redirect it followed, as browsers record them, then the last request
    /// sent and its answer or failure, timed from the last redirect's end. Bodies go up to `bodyLimit` bytes, and
    /// everything `redactor` hides is hidden.
    static func entries(_ message: DebugMessage, bodyLimit: Int, redactor: Redactor) -> [HAREntry] {
        var entries: [HAREntry] = message.redirects.map { hop in
            HAREntry(
                hop.request,
                status: hop.status,
                headers: hop.headers,
                content: Content(
                    size: 0,
                    mimeType: hop.headers[.contentType] ?? "",
                    comment: "a redirect's body is not read"
                ),
                redirectURL: redactor.redact(url: hop.location),
                bodySize: -1,
                timing: hop.timing,
                bodyLimit: bodyLimit,
                redactor: redactor
            )
        }
        let sent = message.currentRequest
        let answer = message.response
        var last = HAREntry(
            sent,
            status: answer?.status,
            headers: answer?.headers ?? [:],
            content: answer.map { content($0, method: sent.method, limit: bodyLimit, redactor: redactor) }
                ?? Content(size: 0, mimeType: ""),
            redirectURL: answer?.headers[.location].map { redactor.redact(urlText: $0) } ?? "",
            bodySize: answer?.data.count ?? -1,
            timing: message.redirects.last.map { message.timing.counted(after: $0.timing) } ?? message.timing,
            bodyLimit: bodyLimit,
            redactor: redactor
        )
        last._error = message.error.map { redactor.redact(body: $0.description) }
        if answer?.status == .switchingProtocols {
            last.describeWebSocket(message, bodyLimit: bodyLimit, redactor: redactor)
        }
        entries.append(last)
        return entries
    }

    /// The entry for `sent`, answered with `status` (`nil`: no answer came, HAR's status 0), `headers` and
    /// `content`, timed by `timing`; request and response carry the HTTP version of the connection.
    private init(
        _ sent: PreparedRequest,
        status: HTTPResponse.Status?,
        headers: HTTPFields,
        content: Content,
        redirectURL: String,
        bodySize: Int,
        timing: Timing,
        bodyLimit: Int,
        redactor: Redactor
    ) {
        let connection = timing.connection
        let version = connection?.httpVersion ?? ""
        startedDateTime = timing.startDate.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        timings = Self.timings(timing)
        time = Self.rounded(timings.blocked + max(timings.connect, 0) + timings.send + timings.wait + timings.receive)
        serverIPAddress = connection?.remote?.address
        self.connection = connection.map { String($0.id) }
        let redactedURL = redactor.redact(url: sent.url)
        request = Request(
            method: sent.method.rawValue,
            url: redactedURL,
            httpVersion: version,
            headers: Self.fields(sent.headers, redactor),
            queryString: Self.query(redactedURL),
            postData: Self.postData(sent, limit: bodyLimit, redactor: redactor),
            bodySize: sent.body.length ?? -1
        )
        response = Response(
            status: status?.code ?? 0,
            statusText: status?.reasonPhrase ?? "",
            httpVersion: version,
            headers: Self.fields(headers, redactor),
            content: content,
            redirectURL: redirectURL,
            bodySize: bodySize
        )
    }

    /// Marks the entry as a WebSocket's: its URL with the `ws` or `wss` scheme, its messages (each cut to
    /// `bodyLimit` bytes, text redacted as bodies are).
    private mutating func describeWebSocket(_ message: DebugMessage, bodyLimit: Int, redactor: Redactor) {
        _resourceType = "websocket"
        for (http, ws) in [("http://", "ws://"), ("https://", "wss://")] where request.url.hasPrefix(http) {
            request.url = ws + request.url.dropFirst(http.count)
        }
        _webSocketMessages = message.webSocketMessages.map { record in
            let cut = WebSocketTranscript.prefix(of: record.message, bytes: max(0, bodyLimit))
            let (opcode, data) =
                switch cut {
                case .text(let text): (1, redactor.redact(body: text))
                case .binary(let bytes): (2, Data(bytes.readableBytesView).base64EncodedString())
                }
            return WebSocketMessageEntry(
                type: record.direction == .sent ? "send" : "receive",
                time: (record.date.timeIntervalSince1970 * 1e6).rounded() / 1e6,
                opcode: opcode,
                data: data
            )
        }
        if message.webSocketMessagesLeftOut > 0 { _webSocketMessagesLeftOut = message.webSocketMessagesLeftOut }
    }

    /// HAR's phases from Courier's figures, in milliseconds: `blocked` until the connection (or, reused, the head),
    /// `connect` for a connection made during the call (its TLS handshake included: `ssl` has no figure of its own),
    /// `wait` until the answer's head, `receive` until its end. `send` is 0: the head is written at once, and a
    /// body's sending overlaps the wait.
    private static func timings(_ timing: Timing) -> Timings {
        func milliseconds(_ duration: Duration?) -> Double {
            guard let duration else { return 0 }
            return max(0, Double(duration.clampedNanoseconds / 1000) / 1e3)  // to the microsecond
        }
        let connected = timing.timeToSecureConnection ?? timing.timeToConnect
        let sent = timing.timeToRequestSent ?? .zero
        let firstByte = timing.timeToFirstByte ?? sent
        let connect = connected.map { milliseconds($0) } ?? -1
        return Timings(
            blocked: rounded(max(0, milliseconds(sent) - max(connect, 0))),
            connect: connect,
            wait: rounded(max(0, milliseconds(firstByte) - milliseconds(sent))),
            receive: rounded(max(0, milliseconds(timing.total) - milliseconds(firstByte)))
        )
    }

    /// `milliseconds` to the microsecond, so a difference of two figures prints as few digits as they do.
    private static func rounded(_ milliseconds: Double) -> Double { (milliseconds * 1000).rounded() / 1000 }

    private static func fields(_ fields: HTTPFields, _ redactor: Redactor) -> [NameValue] {
        fields.map { NameValue(name: $0.name.rawName, value: redactor.redact($0)) }
    }

    /// The query's items as the (redacted) URL spells them, percent-decoded.
    private static func query(_ url: String) -> [NameValue] {
        guard let items = URLComponents(string: url)?.queryItems else { return [] }
        return items.map { NameValue(name: $0.name, value: $0.value ?? "") }
    }

    private static func postData(_ request: PreparedRequest, limit: Int, redactor: Redactor) -> PostData? {
        let mimeType = request.headers[.contentType] ?? ""
        switch request.body {
        case .empty: return nil
        case .bytes(let data):
            let body = Body(data, limit: limit, redactor: redactor)
            // HAR's post data has no encoding field: a body that is not text is described, not carried.
            return PostData(mimeType: mimeType, text: body.encoding == nil ? body.text : nil, comment: body.comment)
        case .file(let url, let length):
            return PostData(mimeType: mimeType, comment: "\(length) bytes from \(url.lastPathComponent), not recorded")
        case .stream:
            return PostData(mimeType: mimeType, comment: "a streamed body, not recorded")
        }
    }

    /// The answer's content. A streamed answer's body went to its caller: its entry says how long the head said it
    /// was, and that it was not recorded.
    private static func content(
        _ answer: ResponseBody,
        method: HTTPRequest.Method,
        limit: Int,
        redactor: Redactor
    ) -> Content {
        if answer.data.isEmpty, method != .head, let length = answer.headers[.contentLength].flatMap(Int.init),
            length > 0
        {
            return Content(
                size: length,
                mimeType: answer.headers[.contentType] ?? "",
                comment: "streamed to the caller, not recorded"
            )
        }
        let body = Body(answer.data, limit: limit, redactor: redactor)
        return Content(
            size: answer.data.count,
            mimeType: answer.headers[.contentType] ?? "",
            text: body.text,
            encoding: body.encoding,
            comment: body.comment
        )
    }

    /// A body as HAR carries it: UTF-8 text with sensitive values hidden as the log hides them, else base64 (as the
    /// log, which prints no body that is not text, has nothing to hide in it); cut at `limit` bytes.
    private struct Body {
        var text: String?
        var encoding: String?
        var comment: String?

        init(_ data: Data, limit: Int, redactor: Redactor) {
            guard !data.isEmpty else { return }
            let kept = data.prefix(max(0, limit))
            if kept.count < data.count { comment = "the first \(kept.count) of \(data.count) bytes" }
            if let text = String(validating: kept, as: UTF8.self) {
                self.text = redactor.redact(body: text)
            } else {
                (self.text, encoding) = (kept.base64EncodedString(), "base64")
            }
        }
    }
}
