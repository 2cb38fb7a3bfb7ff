import Courier
import CourierTestSupport
import CourierTesting
import Crypto
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOPosix
import NIOResumableUpload
import Testing

/// Courier's resumable upload against a server of the draft written by others: swift-nio-extras'
/// `NIOResumableUpload`, which `CourierTesting` no longer serves (it links Foundation into the CLI). The loopback
/// server's own handler carries the fault tests (``ResumableUploadTests``); these check that the client and
/// SwiftNIO's server still agree on the wire: a whole upload, and one whose connection is cut and resumed.
@Suite("Resumable uploads against NIOResumableUpload", .timeLimit(.minutes(1)))
struct ResumableUploadInteropTests {
    @Test func aWholeUploadLands() async throws {
        try await withNIOUploadServer(cutAt: nil) { session, server in
            let (file, digest) = try makeUploadFile(3 << 20)
            _ = try await session.resumableUpload(file, to: server.url("/uploads/a.bin")).result()
            #expect(server.received("/uploads/a.bin") == ReceivedUpload(length: 3 << 20, sha256: digest))
        }
    }

    @Test func aCutUploadGoesOnFromTheServersOffset() async throws {
        try await withNIOUploadServer(cutAt: (1 << 20) + 100) { session, server in
            let (file, digest) = try makeUploadFile(3 << 20)
            let upload = session.resumableUpload(
                file,
                to: server.url("/uploads/b.bin"),
                options: ResumableUploadOptions(retryDelay: .milliseconds(10))
            )
            _ = try await upload.result()
            #expect(server.received("/uploads/b.bin") == ReceivedUpload(length: 3 << 20, sha256: digest))
            #expect(server.wasCut)
        }
    }

    private func withNIOUploadServer(
        cutAt: Int64?,
        _ body: (Session, NIOUploadServer) async throws -> Void
    ) async throws {
        let server = try await NIOUploadServer.start(cutAt: cutAt)
        do {
            try await withSession(Configuration()) { session in try await body(session, server) }
        } catch {
            try? await server.listener.close()
            throw error
        }
        try? await server.listener.close()
    }
}

/// What the interop server saw: each completed upload by path, the byte to cut the connection at, and whether it did.
private typealias UploadsSeen = (received: [String: ReceivedUpload], cutAt: Int64?, wasCut: Bool)

/// `NIOResumableUpload` in front of a sink that hashes each completed upload, with at most one cut connection.
private final class NIOUploadServer: Sendable {
    let listener: any Channel
    private let state: Locked<UploadsSeen>
    /// NIOResumableUpload runs an upload on the loop that created it; one loop keeps the appends in order.
    private static let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    private init(
        listener: any Channel,
        state: Locked<UploadsSeen>
    ) {
        self.listener = listener
        self.state = state
    }

    static func start(cutAt: Int64?) async throws -> NIOUploadServer {
        let state = Locked<UploadsSeen>(([:], cutAt, false))
        let origin = Locked("")
        let context = Locked<HTTPResumableUploadContext?>(nil)
        let listener = try await ServerBootstrap(group: loop)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard let uploads = context.withLock({ $0 }) else { throw ChannelError.ioOnClosedChannel }
                    let sync = channel.pipeline.syncOperations
                    try sync.configureHTTPServerPipeline()
                    try sync.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                    try sync.addHandler(CutOnce(state: state))
                    try sync.addHandler(
                        HTTPResumableUploadHandler(context: uploads) { upload in
                            try? upload.pipeline.syncOperations.addHandler(HashingSink(state: state))
                        }
                    )
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        origin.withLock { $0 = "http://127.0.0.1:\(listener.localAddress?.port ?? 0)" }
        context.withLock { $0 = HTTPResumableUploadContext(origin: origin.withLock { $0 }) }
        return NIOUploadServer(listener: listener, state: state)
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(listener.localAddress?.port ?? 0)\(path)")! }
    func received(_ path: String) -> ReceivedUpload? { state.withLock { $0.received[path] } }
    var wasCut: Bool { state.withLock { $0.wasCut } }

    /// Closes the connection once an upload's data reaches the cut, once.
    private final class CutOnce: ChannelInboundHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart
        let state: Locked<UploadsSeen>
        private var position: Int64 = 0

        init(state: Locked<UploadsSeen>) { self.state = state }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let request):
                position = request.headerFields[HTTPField.Name("Upload-Offset")!].flatMap { Int64($0) } ?? 0
            case .body(let chunk):
                position += Int64(chunk.readableBytes)
                let cut = state.withLock { state -> Bool in
                    guard let at = state.cutAt, position >= at, !state.wasCut else { return false }
                    state.wasCut = true
                    return true
                }
                if cut { return context.close(promise: nil) }
            case .end: break
            }
            context.fireChannelRead(data)
        }
    }

    /// Hashes the body of the whole upload NIOResumableUpload hands on, and answers 201.
    private final class HashingSink: ChannelInboundHandler {
        typealias InboundIn = HTTPRequestPart
        typealias OutboundOut = HTTPResponsePart
        let state: Locked<UploadsSeen>
        private var path = ""
        private var hasher = SHA256()
        private var length: Int64 = 0

        init(state: Locked<UploadsSeen>) { self.state = state }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let request): path = request.path ?? "/"
            case .body(let chunk):
                length += Int64(chunk.readableBytes)
                chunk.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
            case .end:
                let upload = ReceivedUpload(
                    length: length,
                    sha256: Hex.string(hasher.finalize())
                )
                state.withLock { $0.received[path] = upload }
                var head = HTTPResponse(status: .created)
                head.headerFields[.contentLength] = "0"
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
