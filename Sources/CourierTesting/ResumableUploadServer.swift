import Courier
import Crypto
public import Foundation
public import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOPosix
import NIOResumableUpload

/// A loopback server for resumable uploads: swift-nio-extras' `NIOResumableUpload`, the IETF draft
/// (draft-ietf-httpbis-resumable-upload, interop versions 3, 5 and 6) as SwiftNIO's authors serve it, in front of a
/// sink that hashes what each upload delivers. Plain `PUT` and `POST` bodies reach the same sink, so `curl -T` can
/// be measured against it.
///
/// Its faults: ``dropConnections(atBytes:)`` cuts the connection when an upload reaches a byte, ``restart()`` closes
/// every connection and listens again on the same port with the uploads' offsets kept, ``stopReading(atBytes:)``
/// stalls an upload, and ``forgetUploads()`` loses every upload, as an expiry would (a 404 to any question about
/// one).
///
/// ```swift
/// let server = try await ResumableUploadServer.start()
/// // upload to server.url("/uploads/big.iso"), then:
/// let received = server.received("/uploads/big.iso")   // its length and SHA-256
/// await server.shutdown()
/// ```
public final class ResumableUploadServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    /// `http://127.0.0.1:PORT`.
    public let baseURL: URL

    private let state: UploadServerState
    private let listener: Locked<(any Channel)?>

    private init(port: Int, state: UploadServerState, listener: any Channel) {
        self.port = port
        // A well-formed URL for any port number, so this cannot fail.
        self.baseURL = URL(string: "http://127.0.0.1:\(port)")!
        self.state = state
        self.listener = Locked(listener)
    }

    /// The one event loop every connection runs on. NIOResumableUpload 1.35.2 runs an upload on the loop of the
    /// connection that created it and hops to it from an append that comes on another; over the two loops of
    /// `MultiThreadedEventLoopGroup.singleton`, the second of three 64 MiB uploads in a row through one client
    /// stalled: the server stopped reading its append and never answered. On one loop all three land. Courier's
    /// client, for its part, ends such an append with a write-idle timeout and resumes (see
    /// ``stopReading(atBytes:)``).
    private static let serverLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    /// Starts a server on 127.0.0.1 and `port` (0 picks a free one).
    public static func start(port: Int = 0) async throws -> ResumableUploadServer {
        let state = UploadServerState()
        // The origin goes into each upload's `Location`, and the port is known once bound: connections find the
        // context in the state, set before anyone knows where to connect.
        let listener = try await bind(port: port, state: state)
        let bound = listener.localAddress?.port ?? port
        state.forgetUploads(origin: "http://127.0.0.1:\(bound)")
        return ResumableUploadServer(port: bound, state: state, listener: listener)
    }

    private static func bind(port: Int, state: UploadServerState) async throws -> any Channel {
        try await ServerBootstrap(group: serverLoop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let context = state.context.withLock({ $0 }) else { throw ChannelError.ioOnClosedChannel }
                    state.opened(channel)
                    let sync = channel.pipeline.syncOperations
                    try sync.configureHTTPServerPipeline()
                    try sync.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                    try sync.addHandler(UploadFaults(state: state))
                    try sync.addHandler(
                        HTTPResumableUploadHandler(context: context) { upload in
                            try? upload.pipeline.syncOperations.addHandler(UploadSink(state: state))
                        }
                    )
                }
            }
            .bind(host: "127.0.0.1", port: port)
            .get()
    }

    /// The absolute URL of `path` on this server.
    public func url(_ path: String) -> URL { baseURL.appending(path: path) }

    /// What the upload to `path` delivered once complete: its length and SHA-256; `nil` until then.
    public func received(_ path: String) -> ReceivedUpload? { state.received(path) }

    /// Body bytes handed on from every request, resends included: what went over the wire twice shows here. The
    /// chunk that reaches a drop is not handed on, nor counted.
    public var bytesReceived: Int64 { state.bytesReceived }

    /// Requests with `method` (an upload's creation is a `POST`, an append a `PATCH`, an offset request a `HEAD`).
    public func requests(_ method: HTTPRequest.Method) -> Int { state.requests(method) }

    /// Cuts the connection once an upload's data reaches each of `offsets` (in the upload, whichever request
    /// carries it), each once.
    public func dropConnections(atBytes offsets: [Int64]) { state.addDrops(offsets) }

    /// Stops reading the connection once an upload's data reaches each of `offsets` (each once): the server takes
    /// no more of that request and never answers it, as a stalled server would, until a question about the upload
    /// (a `HEAD`) closes the stalled connection.
    public func stopReading(atBytes offsets: [Int64]) { state.addStalls(offsets) }

    /// Makes the next append claim an `Upload-Offset` one byte past the one its client sent, so the server finds
    /// it does not match and answers `409 Conflict` with its own.
    public func mismatchNextAppend() { state.setMismatch() }

    /// Loses every upload, as a server whose uploads expired would: a question about one gets 404, an upload
    /// that started before has to start over. Every connection is closed, since each holds the uploads it began with.
    public func forgetUploads() {
        state.forgetUploads(origin: baseURL.absoluteString)
        state.closeConnections()
    }

    /// Closes every connection and the listener, then listens again on the same port: a server restart that
    /// keeps the uploads and their offsets, as one with durable storage would.
    public func restart() async throws {
        let old = listener.withLock { $0 }
        try? await old?.close()
        state.closeConnections()
        let new = try await Self.bind(port: port, state: state)
        listener.withLock { $0 = new }
    }

    /// Stops listening and closes every connection.
    public func shutdown() async {
        let old = listener.withLock { $0.take() }
        try? await old?.close()
        state.closeConnections()
    }
}

/// What a completed upload delivered.
public struct ReceivedUpload: Sendable, Hashable {
    /// Its length in bytes.
    public var length: Int64
    /// Its SHA-256, in lowercase hex.
    public var sha256: String

    /// An upload of `length` bytes with this digest, to compare with what the server has.
    public init(length: Int64, sha256: String) {
        self.length = length
        self.sha256 = sha256
    }
}

/// What the server's handlers share: completed uploads, counters, faults to come, open connections.
final class UploadServerState: Sendable {
    private struct Values {
        var received: [String: ReceivedUpload] = [:]
        var bytesReceived: Int64 = 0
        var requests: [HTTPRequest.Method: Int] = [:]
        var drops: [Int64] = []
        var stalls: [Int64] = []
        var mismatchesNextAppend = false
        var connections: [ObjectIdentifier: any Channel] = [:]
    }

    private let values = Locked(Values())
    /// The uploads, kept across restarts; set once the port is known.
    let context = Locked<HTTPResumableUploadContext?>(nil)
    /// A new set of uploads, the old ones forgotten; `origin` (`http://127.0.0.1:PORT`) starts each `Location`.
    func forgetUploads(origin: String) { context.withLock { $0 = HTTPResumableUploadContext(origin: origin) } }

    func received(_ path: String) -> ReceivedUpload? { values.withLock { $0.received[path] } }
    func complete(_ path: String, _ upload: ReceivedUpload) { values.withLock { $0.received[path] = upload } }
    var bytesReceived: Int64 { values.withLock { $0.bytesReceived } }
    func requests(_ method: HTTPRequest.Method) -> Int { values.withLock { $0.requests[method] ?? 0 } }
    func request(_ method: HTTPRequest.Method) { values.withLock { $0.requests[method, default: 0] += 1 } }
    func addDrops(_ offsets: [Int64]) { values.withLock { $0.drops = ($0.drops + offsets).sorted() } }
    func addStalls(_ offsets: [Int64]) { values.withLock { $0.stalls = ($0.stalls + offsets).sorted() } }
    func setMismatch() { values.withLock { $0.mismatchesNextAppend = true } }
    /// Whether this append's offset is to be changed (once).
    func takeMismatch() -> Bool {
        values.withLock { values in
            defer { values.mismatchesNextAppend = false }
            return values.mismatchesNextAppend
        }
    }

    /// What happens once the upload's data reaches `end`: a drop that is due (used up, and the chunk is not
    /// counted), a stall that is due (used up), or nothing; the chunk of `count` bytes is counted unless dropped.
    func fault(reaching end: Int64, reading count: Int) -> UploadFault? {
        values.withLock { values in
            if let index = values.drops.firstIndex(where: { $0 <= end }) {
                values.drops.remove(at: index)
                return .drop
            }
            values.bytesReceived += Int64(count)
            if let index = values.stalls.firstIndex(where: { $0 <= end }) {
                values.stalls.remove(at: index)
                return .stall
            }
            return nil
        }
    }

    func opened(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        values.withLock { $0.connections[id] = channel }
        channel.closeFuture.whenComplete { [self] _ in _ = values.withLock { $0.connections.removeValue(forKey: id) } }
    }

    func closeConnections() {
        for channel in values.withLock({ Array($0.connections.values) }) { channel.close(promise: nil) }
    }
}

/// A fault an upload's data can reach.
enum UploadFault {
    /// The connection is cut; the chunk that reached it goes nowhere.
    case drop
    /// The connection is read no more; the chunk that reached it is handed on.
    case stall
}

/// Counts each request and its body bytes, and cuts the connection where a drop is due or stops reading it where
/// a stall is. It sits before the resumable-upload handler, so it sees the requests as they come: an append starts
/// at its `Upload-Offset`.
private final class UploadFaults: ChannelDuplexHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let state: UploadServerState
    /// Where in the upload the current request's next byte goes.
    private var position: Int64 = 0
    private var isClosed = false
    private var isStalled = false

    init(state: UploadServerState) { self.state = state }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isClosed else { return }  // what was read with the chunk that cut the connection goes nowhere
        switch unwrapInboundIn(data) {
        case .head(var request):
            state.request(request.method)
            position = request.headerFields[uploadOffset].flatMap { Int64($0) } ?? 0
            if request.method == .patch, state.takeMismatch() {
                request.headerFields[uploadOffset] = String(position + 1)
                context.fireChannelRead(wrapInboundOut(.head(request)))
                return
            }
        case .body(let chunk):
            position += Int64(chunk.readableBytes)
            switch state.fault(reaching: position, reading: chunk.readableBytes) {
            case .drop?:
                isClosed = true
                context.close(promise: nil)
                return
            case .stall?: isStalled = true
            case nil: break
            }
        case .end:
            break
        }
        context.fireChannelRead(data)
    }

    /// A stalled connection asks the socket for nothing more.
    func read(context: ChannelHandlerContext) {
        if !isStalled { context.read() }
    }

    private let uploadOffset = HTTPField.Name("Upload-Offset")!
}

/// Hashes each request body it is handed (a whole upload, as the resumable-upload handler puts it together) and
/// answers `201 Created` with `{"length":…,"sha256":"…","serverBytesReceived":…}` (the last is
/// ``ResumableUploadServer/bytesReceived`` then, for a measure taken from outside); other methods get 405.
private final class UploadSink: ChannelInboundHandler {
    typealias InboundIn = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    private let state: UploadServerState
    private var path: String?
    private var hasher = SHA256()
    private var length: Int64 = 0

    init(state: UploadServerState) { self.state = state }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            hasher = SHA256()
            length = 0
            path =
                request.method == .put || request.method == .post
                ? request.path.map { String($0.prefix { $0 != "?" }) } : nil
            if path == nil { respond(context, status: .methodNotAllowed, body: "") }
        case .body(let chunk):
            length += Int64(chunk.readableBytes)
            chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        case .end:
            guard let path else { return }
            let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
            let upload = ReceivedUpload(length: length, sha256: digest)
            state.complete(path, upload)
            let total = state.bytesReceived
            respond(
                context,
                status: .created,
                body: "{\"length\":\(length),\"sha256\":\"\(digest)\",\"serverBytesReceived\":\(total)}"
            )
            self.path = nil
        }
    }

    private func respond(_ context: ChannelHandlerContext, status: HTTPResponse.Status, body: String) {
        var head = HTTPResponse(status: status)
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.contentLength] = String(body.utf8.count)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if !body.isEmpty { context.write(wrapOutboundOut(.body(ByteBuffer(string: body))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
