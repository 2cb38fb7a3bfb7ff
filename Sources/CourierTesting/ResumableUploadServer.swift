import Courier
import Crypto
public import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOPosix

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A loopback server for resumable uploads: the IETF draft (draft-ietf-httpbis-resumable-upload, interop versions
/// 3, 5 and 6) served by `ResumableUploadHandler`, which hashes what each upload delivers. Plain `PUT` and `POST`
/// bodies are hashed the same way, so `curl -T` can be measured against it.
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

    /// The one event loop every connection runs on, so an upload's appends, from whichever connection, are taken
    /// in order.
    private static let serverLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    /// Starts a server on 127.0.0.1 and `port` (0 picks a free one).
    public static func start(port: Int = 0) async throws -> ResumableUploadServer {
        let state = UploadServerState()
        // The origin goes into each upload's `Location`, and the port is known once bound, before anyone knows
        // where to connect.
        let listener = try await bind(port: port, state: state)
        let bound = listener.localAddress?.port ?? port
        state.setOrigin("http://127.0.0.1:\(bound)")
        return ResumableUploadServer(port: bound, state: state, listener: listener)
    }

    private static func bind(port: Int, state: UploadServerState) async throws -> any Channel {
        try await ServerBootstrap(group: serverLoop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    state.opened(channel)
                    let sync = channel.pipeline.syncOperations
                    try sync.configureHTTPServerPipeline()
                    try sync.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                    try sync.addHandler(UploadFaults(state: state))
                    try sync.addHandler(ResumableUploadHandler(state: state))
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
        state.forgetUploads()
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
    /// The uploads not yet complete, by token, kept across restarts.
    private let uploads = Locked<[String: PendingUpload]>([:])
    /// `http://127.0.0.1:PORT`, which starts each upload's `Location`; set once the port is known.
    private let origin = Locked("")

    func setOrigin(_ text: String) { origin.withLock { $0 = text } }

    /// Loses every upload, as an expiry would.
    func forgetUploads() { uploads.withLock { $0 = [:] } }

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

/// One upload the server holds: where it was created, what it has, and the connection appending to it now.
struct PendingUpload {
    var path: String
    var offset: Int64 = 0
    /// `Upload-Length`, when the client announced one.
    var length: Int64?
    var hasher = SHA256()
    var appender: (any Channel)?
}

/// What became of an append's chunk.
enum AppendResult {
    case appended
    /// The upload is no more (cancelled, or forgotten).
    case gone
    /// The chunk would take the upload past its announced length; the upload has `offset`.
    case beyondLength(offset: Int64)
}

extension UploadServerState {
    /// A new upload for `path`, appended to by `appender`; returns its token.
    func create(path: String, length: Int64?, appender: any Channel) -> String {
        let token = Hex.string((0..<16).map { _ in UInt8.random(in: 0...255) })
        uploads.withLock { $0[token] = PendingUpload(path: path, length: length, appender: appender) }
        return token
    }

    /// The absolute URL of the upload `token`.
    func location(of token: String) -> String {
        origin.withLock { $0 } + ResumableUploadHandler.resumptionPrefix + token
    }

    /// The upload's offset, once the connection appending to it (if another) is closed, as a question about an
    /// upload ends the append in flight; `channel` appends to it next (or none). `nil` when there is no such upload.
    func takeOver(_ token: String, by channel: (any Channel)?) -> Int64? {
        let (offset, previous) = uploads.withLock { uploads -> (Int64?, (any Channel)?) in
            guard var upload = uploads[token] else { return (nil, nil) }
            let previous = upload.appender
            upload.appender = channel
            uploads[token] = upload
            return (upload.offset, previous)
        }
        if let previous, channel.map({ $0 !== previous }) ?? true { previous.close(promise: nil) }
        return offset
    }

    /// Ends `channel`'s append to the upload; returns the upload's offset.
    @discardableResult
    func detach(_ token: String, from channel: any Channel) -> Int64? {
        uploads.withLock { uploads in
            if uploads[token]?.appender === channel { uploads[token]?.appender = nil }
            return uploads[token]?.offset
        }
    }

    func setLength(_ token: String, _ length: Int64) { uploads.withLock { $0[token]?.length = length } }

    /// Adds `chunk` to the upload.
    func append(_ chunk: ByteBuffer, to token: String) -> AppendResult {
        uploads.withLock { uploads in
            guard var upload = uploads[token] else { return .gone }
            let end = upload.offset + Int64(chunk.readableBytes)
            if let length = upload.length, end > length { return .beyondLength(offset: upload.offset) }
            chunk.withUnsafeReadableBytes { upload.hasher.update(bufferPointer: $0) }
            upload.offset = end
            uploads[token] = upload
            return .appended
        }
    }

    /// Removes the completed upload; returns its path and what it delivered.
    func finish(_ token: String) -> (String, ReceivedUpload)? {
        uploads.withLock { uploads in
            uploads.removeValue(forKey: token).map {
                ($0.path, ReceivedUpload(length: $0.offset, sha256: Hex.string($0.hasher.finalize())))
            }
        }
    }

    /// Drops the upload (`DELETE`); whether there was one.
    func cancel(_ token: String) -> Bool { uploads.withLock { $0.removeValue(forKey: token) != nil } }
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
