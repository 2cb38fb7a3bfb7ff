import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization

/// Enforces public-key pins on the connection that carries each request, which AsyncHTTPClient cannot do itself:
/// it builds its TLS handler internally and takes no verification callback.
///
/// The bridge listens on a Unix socket in a directory only this user can open. AsyncHTTPClient sends the request
/// there in plain HTTP; for every connection it accepts, the bridge opens the TLS connection to the real server
/// with full verification (``TLSPolicy/makeTLSConfiguration()``), compares the leaf certificate's public-key hash
/// with the pins once the handshake is done, and only then starts relaying. Before that it reads nothing from
/// AsyncHTTPClient, so no byte of a request reaches a server whose key does not match. A mismatch closes both
/// connections and leaves a ``CourierError`` naming the host for the transport to report.
final class PinningBridge: Sendable {
    /// The socket AsyncHTTPClient connects to.
    let socketPath: String
    private let directory: String
    private let server: any Channel
    private let reporter: FailureReporter

    private init(socketPath: String, directory: String, server: any Channel, reporter: FailureReporter) {
        self.socketPath = socketPath
        self.directory = directory
        self.server = server
        self.reporter = reporter
    }

    /// What is needed to reach one server under one policy.
    struct Target: Hashable, Sendable {
        var host: String
        var port: Int
        var policy: TLSPolicy
        var connectTimeout: Duration
    }

    /// Starts a bridge to `target`; fails with a typed error when its policy's files cannot be read.
    static func start(_ target: Target, logger: Logger) async throws -> PinningBridge {
        let context = try NIOSSLContext(configuration: target.policy.makeTLSConfiguration())
        let directory = try makePrivateDirectory()
        let socketPath = directory + "/s"
        let pins = target.policy.pinning.publicKeyHashes
        let reporter = FailureReporter(host: target.host, logger: logger)
        do {
            let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .childChannelOption(.autoRead, value: false)  // nothing is read until the server's key matched
                .childChannelInitializer { inbound in
                    relay(inbound, to: target, context: context, pins: pins, reporter: reporter)
                    return inbound.eventLoop.makeSucceededVoidFuture()
                }
                .bind(unixDomainSocketPath: socketPath)
                .get()
            return PinningBridge(socketPath: socketPath, directory: directory, server: server, reporter: reporter)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw CourierError(code: .transport, message: "cannot start the pinning relay for \(target.host)", underlying: error)
        }
    }

    /// The failure the bridge saw last, if any, cleared as it is read.
    func takeFailure() -> CourierError? { reporter.take() }

    /// Stops listening and removes the socket's directory; relayed connections end with their peers.
    func shutdown() async {
        try? await server.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func relay(_ inbound: any Channel, to target: Target, context: NIOSSLContext, pins: Set<String>,
                              reporter: FailureReporter) {
        let serverName = target.host.isIPAddress ? nil : target.host
        ClientBootstrap(group: inbound.eventLoop)  // the same loop, so the glue handlers can call each other directly
            .connectTimeout(TimeAmount(target.connectTimeout))
            .channelInitializer { outbound in
                outbound.eventLoop.makeCompletedFuture {
                    let tls = try NIOSSLClientHandler(context: context, serverHostname: serverName)
                    try outbound.pipeline.syncOperations.addHandler(tls)
                    try outbound.pipeline.syncOperations.addHandler(PinCheck(inbound: inbound, pins: pins, reporter: reporter))
                }
            }
            .connect(host: target.host, port: target.port)
            .whenFailure { error in
                reporter.report(CourierError(code: .connectionFailed, message: "could not connect to \(target.host):\(target.port)",
                                             underlying: error))
                inbound.close(promise: nil)
            }
    }

    private static func makePrivateDirectory() throws -> String {
        // Unix socket paths are limited to about 100 bytes, so a long TMPDIR is not used.
        let temporary = FileManager.default.temporaryDirectory.path(percentEncoded: false)
        let base = temporary.utf8.count <= 60 ? temporary : "/tmp"
        let directory = (base as NSString).appendingPathComponent("courier-pin-" + UUID().uuidString.prefix(8))
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw CourierError(code: .fileAccess, message: "cannot create a private directory for the pinning relay", underlying: error)
        }
        return directory
    }
}

/// Keeps a bridge's last failure for the transport and logs each one.
private final class FailureReporter: Sendable {
    let host: String
    private let logger: Logger
    private let last = Mutex<CourierError?>(nil)

    init(host: String, logger: Logger) {
        self.host = host
        self.logger = logger
    }

    func report(_ error: CourierError) {
        logger.warning("\(error.message)", metadata: ["host": "\(host)"])
        last.withLock { $0 = error }
    }

    /// The last failure, cleared as it is read.
    func take() -> CourierError? {
        last.withLock { last in
            defer { last = nil }
            return last
        }
    }
}

/// Waits for the TLS handshake, checks the leaf's public key against the pins, and joins the two connections.
private final class PinCheck: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let inbound: any Channel
    private let pins: Set<String>
    private let reporter: FailureReporter
    private var isJoined = false

    init(inbound: any Channel, pins: Set<String>, reporter: FailureReporter) {
        self.inbound = inbound
        self.pins = pins
        self.reporter = reporter
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            do {
                try check(context)
                try join(context)
            } catch let error as CourierError {
                fail(context, error)
            } catch {
                fail(context, CourierError(code: .tls, message: "could not relay to \(reporter.host): \(error)", underlying: error))
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !isJoined else { return context.fireErrorCaught(error) }
        fail(context, TLSFailure.describe(error, host: reporter.host))
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !isJoined { inbound.close(promise: nil) }
        context.fireChannelInactive()
    }

    private func check(_ context: ChannelHandlerContext) throws {
        let handler = try context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
        guard let leaf = handler.peerCertificate else {
            throw CourierError(code: .tls, message: "\(reporter.host) presented no certificate to check against its pins")
        }
        let presented = try CertificatePinning.publicKeyHash(of: leaf)
        guard pins.contains(presented) else {
            throw CourierError(code: .tls, message: "certificate pin mismatch for \(reporter.host): its public key sha256/\(presented) is not pinned")
        }
    }

    private func join(_ context: ChannelHandlerContext) throws {
        let (toServer, toClient) = GlueHandler.matchedPair()
        try context.pipeline.syncOperations.addHandler(toServer)
        try inbound.pipeline.syncOperations.addHandler(toClient)
        isJoined = true
        try inbound.syncOptions?.setOption(.autoRead, value: true)
    }

    private func fail(_ context: ChannelHandlerContext, _ error: CourierError) {
        reporter.report(error)
        inbound.close(promise: nil)
        context.close(promise: nil)
    }
}

extension String {
    /// Whether the string is an IPv4 or IPv6 literal, which cannot be sent as a TLS server name.
    var isIPAddress: Bool {
        (try? SocketAddress(ipAddress: self, port: 0)) != nil
    }
}
