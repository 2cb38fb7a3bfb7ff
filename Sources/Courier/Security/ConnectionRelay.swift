import Logging
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Makes the connections AsyncHTTPClient cannot make itself, and relays requests over them:
///
/// - TLS with public-key pins checked on the connection that carries the request (AsyncHTTPClient builds its TLS
///   handler internally and takes no verification callback);
/// - a hop through a SOCKS5 proxy that wants a user name and password (AsyncHTTPClient's SOCKS has no authentication).
///
/// The relay listens on a Unix socket in a directory only this user can open. AsyncHTTPClient sends the request
/// there in plain HTTP; for every connection it accepts, the relay connects to the server (through the SOCKS5
/// proxy when there is one), and for `https` does TLS with full verification (``TLSPolicy/makeTLSConfiguration()``)
/// and compares the leaf certificate's public-key hash with the pins once the handshake is done. Only then does it
/// start relaying. Before that it reads nothing from AsyncHTTPClient, so no byte of a request reaches a server whose
/// key does not match. A failure closes both connections and leaves a ``CourierError`` naming the host for the
/// transport to report.
final class ConnectionRelay: Sendable {
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

    /// What is needed to reach one server.
    struct Target: Hashable, Sendable {
        var host: String
        var port: Int
        /// The address to connect to instead of resolving `host` (``Configuration/hostAddresses``); TLS still
        /// checks the certificate against `host`.
        var address: String?
        /// The TLS policy for `https`; `nil` for plain `http`.
        var tls: TLSPolicy?
        /// A SOCKS5 proxy to go through.
        var socks: Proxy?
        var connectTimeout: Duration
    }

    /// Starts a relay to `target`; fails with a typed error when its policy's files cannot be read.
    static func start(_ target: Target, logger: Logger) async throws -> ConnectionRelay {
        let context = try target.tls.map { try NIOSSLContext(configuration: $0.makeTLSConfiguration()) }
        let directory = try makePrivateDirectory()
        let socketPath = directory + "/s"
        let reporter = FailureReporter(host: target.host, logger: logger)
        do {
            let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .childChannelOption(.autoRead, value: false)  // nothing is read until the server's key matched
                .childChannelInitializer { inbound in
                    relay(inbound, to: target, context: context, reporter: reporter)
                    return inbound.eventLoop.makeSucceededVoidFuture()
                }
                .bind(unixDomainSocketPath: socketPath)
                .get()
            return ConnectionRelay(socketPath: socketPath, directory: directory, server: server, reporter: reporter)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw CourierError(
                code: .transport,
                message: "cannot start the connection relay for \(target.host)",
                underlying: error
            )
        }
    }

    /// The failure the relay saw last, if any, cleared as it is read.
    func takeFailure() -> CourierError? { reporter.take() }

    /// Stops listening and removes the socket's directory; relayed connections end with their peers.
    func shutdown() async {
        try? await server.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func relay(
        _ inbound: any Channel,
        to target: Target,
        context: NIOSSLContext?,
        reporter: FailureReporter
    ) {
        let pins = target.tls?.pinning.publicKeyHashes ?? []
        let checksName = target.tls.map { $0.validatesDomainName && !$0.allowsInvalidCertificates } ?? false
        let connectHost = target.address ?? target.host
        // Once a byte stream to the target exists: TLS and the pin check for https, else join the two at once.
        let secure: @Sendable (any Channel) throws -> Void = { outbound in
            guard let context else { return try PinCheck.join(inbound, outbound) }
            let tls = try NIOSSLClientHandler(
                context: context,
                serverHostname: target.host.isIPAddress ? nil : target.host
            )
            try outbound.pipeline.syncOperations.addHandler(tls)
            try outbound.pipeline.syncOperations.addHandler(
                PinCheck(inbound: inbound, pins: pins, checksName: checksName, reporter: reporter)
            )
        }
        let hop = target.socks.map { (host: $0.host, port: $0.port) } ?? (host: connectHost, port: target.port)
        ClientBootstrap(group: inbound.eventLoop)  // the same loop, so the glue handlers can call each other directly
            .connectTimeout(TimeAmount(target.connectTimeout))
            .channelInitializer { outbound in
                outbound.eventLoop.makeCompletedFuture {
                    guard let socks = target.socks else { return try secure(outbound) }
                    let handshake = SOCKS5Handshake(
                        host: connectHost,
                        port: target.port,
                        proxy: socks,
                        established: { tunnel in
                            do { try secure(tunnel) } catch {
                                reporter.report(TLSFailure.describe(error, host: target.host))
                                tunnel.close(promise: nil)
                                inbound.close(promise: nil)
                            }
                        },
                        failed: { error in
                            reporter.report(error)
                            inbound.close(promise: nil)
                        }
                    )
                    try outbound.pipeline.syncOperations.addHandler(handshake)
                }
            }
            .connect(host: hop.host, port: hop.port)
            .whenFailure { error in
                let through = target.socks.map { " through the SOCKS5 proxy \($0)" } ?? ""
                reporter.report(
                    CourierError(
                        code: .connectionFailed,
                        message: "could not connect to \(hop.host):\(hop.port)\(through)",
                        underlying: error
                    )
                )
                inbound.close(promise: nil)
            }
    }

    private static func makePrivateDirectory() throws -> String {
        // Unix socket paths are limited to about 100 bytes, so a long TMPDIR is not used.
        let temporary = FileManager.default.temporaryDirectory.path(percentEncoded: false)
        let base = temporary.utf8.count <= 60 ? temporary : "/tmp"
        let directory = (base.hasSuffix("/") ? base : base + "/") + "courier-relay-" + UUID().uuidString.prefix(8)
        do {
            try FileManager.default.createDirectory(
                atPath: directory,
                withIntermediateDirectories: false,
                attributes: [.posixPermissions: 0o700]
            )
        } catch {
            throw CourierError(
                code: .fileAccess,
                message: "cannot create a private directory for the connection relay",
                underlying: error
            )
        }
        return directory
    }
}

/// Keeps a relay's last failure for the transport and logs each one.
private final class FailureReporter: Sendable {
    let host: String
    private let logger: Logger
    private let last = Locked<CourierError?>(nil)

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

/// Waits for the TLS handshake, checks that the leaf names the host (``ServerIdentity``) and that its public key is
/// pinned, and joins the two connections. The first failure is the one reported: the close it causes can make the
/// TLS handler report an unclean shutdown after it, which would otherwise hide the reason.
private final class PinCheck: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let inbound: any Channel
    private let pins: Set<String>
    private let checksName: Bool
    private let reporter: FailureReporter
    private var isJoined = false
    private var hasFailed = false

    init(inbound: any Channel, pins: Set<String>, checksName: Bool, reporter: FailureReporter) {
        self.inbound = inbound
        self.pins = pins
        self.checksName = checksName
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
                fail(
                    context,
                    CourierError(
                        code: .tls,
                        message: "could not relay to \(reporter.host): \(error)",
                        underlying: error
                    )
                )
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
        if checksName { try ServerIdentity.check(context.pipeline.syncOperations, names: reporter.host) }
        try CertificatePinning.check(context, against: pins, host: reporter.host)
    }

    private func join(_ context: ChannelHandlerContext) throws {
        try Self.join(inbound, context.channel)
        isJoined = true
    }

    /// Joins AsyncHTTPClient's connection to the one to the server, and starts reading from the former.
    static func join(_ inbound: any Channel, _ outbound: any Channel) throws {
        let (toServer, toClient) = GlueHandler.matchedPair()
        try outbound.pipeline.syncOperations.addHandler(toServer)
        try inbound.pipeline.syncOperations.addHandler(toClient)
        try inbound.syncOptions?.setOption(.autoRead, value: true)
    }

    private func fail(_ context: ChannelHandlerContext, _ error: CourierError) {
        guard !hasFailed else { return }
        hasFailed = true
        reporter.report(error)
        inbound.close(promise: nil)
        context.close(promise: nil)
    }
}
