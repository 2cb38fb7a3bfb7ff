import Courier
import Crypto
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// The server side of draft-ietf-httpbis-resumable-upload (interop versions 3, 5 and 6), for one connection:
/// creation (`POST` or `PUT` with `Upload-Complete`, answered first with `104` and the upload's `Location`),
/// offset retrieval (`HEAD`), appending (`PATCH` at `Upload-Offset`), cancellation (`DELETE`) and `OPTIONS`. A
/// request without the protocol's fields is a plain body, hashed whole. The uploads live in
/// ``UploadServerState``, so they outlive the connection that began them; a completed upload (or a plain body) is
/// answered `201 Created` with `{"length":…,"sha256":"…","serverBytesReceived":…}`.
///
/// The test server's own, since swift-nio-extras' `NIOResumableUpload` needs swift-http-structured-headers,
/// which links Foundation (and so ICU) into every binary that serves uploads, the `courier` CLI among them.
final class ResumableUploadHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    /// What the body of the current request goes to.
    private enum Mode {
        /// Between requests.
        case idle
        /// A plain `PUT` or `POST` body, hashed whole.
        case plain(path: String, hasher: SHA256, length: Int64)
        /// The upload `token`, from a creation or an append.
        case appending(token: String, version: Int, complete: Bool, isCreation: Bool)
        /// The request was answered already; the rest of its body goes nowhere.
        case discarding
    }

    static let resumptionPrefix = "/resumable_upload/"
    private let state: UploadServerState
    private var mode = Mode.idle

    init(state: UploadServerState) { self.state = state }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request): start(request, context: context)
        case .body(let chunk): receive(chunk, context: context)
        case .end: end(context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .appending(let token, _, _, _) = mode { state.detach(token, from: context.channel) }
        mode = .idle
        context.fireChannelInactive()
    }

    private func start(_ request: HTTPRequest, context: ChannelHandlerContext) {
        let path = request.path.map { String($0.prefix { $0 != "?" }) } ?? "/"
        let fields = request.headerFields
        guard let versionText = fields[UploadField.version] else { return startPlain(request.method, path, context) }
        guard let version = Int(versionText), [3, 5, 6].contains(version) else {
            return answer(context, status: .badRequest, version: 6)
        }
        let complete =
            version >= 5
            ? StructuredFieldValue.boolean(fields[UploadField.complete])
            : StructuredFieldValue.boolean(fields[UploadField.incomplete]).map { !$0 }
        let offset = StructuredFieldValue.integer(fields[UploadField.offset])
        let length = StructuredFieldValue.integer(fields[UploadField.length])
        let noUploadFields = complete == nil && offset == nil && length == nil
        if request.method == .options {
            guard noUploadFields else { return answer(context, status: .badRequest, version: version) }
            return answer(context, status: .ok, version: version, extra: [(UploadField.limit, "min-size=0")])
        }
        guard path.hasPrefix(Self.resumptionPrefix) else {
            guard let complete else { return startPlain(request.method, path, context) }
            guard offset == nil || offset == 0 else { return answer(context, status: .badRequest, version: version) }
            let token = state.create(path: path, length: length, appender: context.channel)
            var informational = HTTPResponse(status: .init(code: 104, reasonPhrase: "Upload Resumption Supported"))
            informational.headerFields[UploadField.version] = String(version)
            informational.headerFields[.location] = state.location(of: token)
            context.writeAndFlush(wrapOutboundOut(.head(informational)), promise: nil)
            mode = .appending(token: token, version: version, complete: complete, isCreation: true)
            return
        }
        let token = String(path.dropFirst(Self.resumptionPrefix.count))
        switch request.method {
        case .head:
            guard noUploadFields else { return answer(context, status: .badRequest, version: version) }
            guard let current = state.takeOver(token, by: nil) else {
                return answer(context, status: .notFound, version: version)
            }
            answer(
                context,
                status: .noContent,
                version: version,
                extra: UploadField.progress(offset: current, complete: false, version: version) + [
                    (.cacheControl, "no-store")
                ]
            )
        case .patch:
            guard let offset, version < 6 || fields[.contentType] == "application/partial-upload" else {
                return answer(context, status: .badRequest, version: version)
            }
            guard let current = state.takeOver(token, by: context.channel) else {
                return answer(context, status: .notFound, version: version)
            }
            guard current == offset else {
                state.detach(token, from: context.channel)
                let progress = UploadField.progress(offset: current, complete: false, version: version)
                return answer(context, status: .conflict, version: version, extra: progress)
            }
            if let length { state.setLength(token, length) }
            mode = .appending(token: token, version: version, complete: complete ?? true, isCreation: false)
        case .delete:
            guard noUploadFields else { return answer(context, status: .badRequest, version: version) }
            answer(context, status: state.cancel(token) ? .noContent : .notFound, version: version)
        default:
            answer(context, status: .badRequest, version: version)
        }
    }

    private func startPlain(_ method: HTTPRequest.Method, _ path: String, _ context: ChannelHandlerContext) {
        guard method == .put || method == .post else { return answer(context, status: .methodNotAllowed, version: nil) }
        mode = .plain(path: path, hasher: SHA256(), length: 0)
    }

    private func receive(_ chunk: ByteBuffer, context: ChannelHandlerContext) {
        switch mode {
        case .plain(let path, var hasher, let length):
            chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            mode = .plain(path: path, hasher: hasher, length: length + Int64(chunk.readableBytes))
        case .appending(let token, let version, _, _):
            switch state.append(chunk, to: token) {
            case .appended: break
            case .gone: answer(context, status: .notFound, version: version)
            case .beyondLength(let offset):
                state.detach(token, from: context.channel)
                let progress = UploadField.progress(offset: offset, complete: false, version: version)
                answer(context, status: .conflict, version: version, extra: progress)
            }
        case .idle, .discarding:
            break
        }
    }

    private func end(context: ChannelHandlerContext) {
        switch mode {
        case .plain(let path, let hasher, let length):
            mode = .idle
            let upload = ReceivedUpload(length: length, sha256: Hex.string(hasher.finalize()))
            state.complete(path, upload)
            answerCreated(context, upload, extra: [])
        case .appending(let token, let version, let complete, let isCreation):
            mode = .idle
            let location = isCreation ? [(HTTPField.Name.location, state.location(of: token))] : []
            if complete {
                guard let (path, upload) = state.finish(token) else {
                    return answer(context, status: .notFound, version: version)
                }
                state.complete(path, upload)
                let progress = UploadField.progress(offset: upload.length, complete: true, version: version)
                answerCreated(context, upload, extra: [(UploadField.version, String(version))] + location + progress)
            } else {
                let offset = state.detach(token, from: context.channel) ?? 0
                let progress = UploadField.progress(offset: offset, complete: false, version: version)
                answer(context, status: .created, version: version, extra: location + progress)
            }
        case .discarding, .idle:
            mode = .idle
        }
    }

    /// `201 Created` with what the upload delivered, as JSON.
    private func answerCreated(
        _ context: ChannelHandlerContext,
        _ upload: ReceivedUpload,
        extra: [(HTTPField.Name, String)]
    ) {
        let body =
            "{\"length\":\(upload.length),\"sha256\":\"\(upload.sha256)\",\"serverBytesReceived\":\(state.bytesReceived)}"
        respond(context, status: .created, fields: extra + [(.contentType, "application/json")], body: body)
    }

    /// A bodiless answer with the protocol's version field; the rest of the request's body is dropped.
    private func answer(
        _ context: ChannelHandlerContext,
        status: HTTPResponse.Status,
        version: Int?,
        extra: [(HTTPField.Name, String)] = []
    ) {
        mode = .discarding
        respond(
            context,
            status: status,
            fields: (version.map { [(UploadField.version, String($0))] } ?? []) + extra,
            body: ""
        )
    }

    private func respond(
        _ context: ChannelHandlerContext,
        status: HTTPResponse.Status,
        fields: [(HTTPField.Name, String)],
        body: String
    ) {
        var head = HTTPResponse(status: status)
        for (name, value) in fields { head.headerFields.append(HTTPField(name: name, value: value)) }
        if status != .noContent { head.headerFields[.contentLength] = String(body.utf8.count) }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !body.isEmpty { context.write(wrapOutboundOut(.body(ByteBuffer(string: body))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}

/// The protocol's header fields and their values.
enum UploadField {
    static let version = HTTPField.Name("Upload-Draft-Interop-Version")!
    static let complete = HTTPField.Name("Upload-Complete")!
    static let incomplete = HTTPField.Name("Upload-Incomplete")!
    static let offset = HTTPField.Name("Upload-Offset")!
    static let length = HTTPField.Name("Upload-Length")!
    static let limit = HTTPField.Name("Upload-Limit")!

    /// `Upload-Offset` and whether the upload is complete, in the field the version uses for that.
    static func progress(offset: Int64, complete: Bool, version: Int) -> [(HTTPField.Name, String)] {
        let completion = version >= 5 ? (Self.complete, complete ? "?1" : "?0") : (incomplete, complete ? "?0" : "?1")
        return [completion, (Self.offset, String(offset))]
    }
}
