import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOTLS

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The server's answer to one opening handshake, as the call's machine reads it: its status and headers, and for
/// a 101 the open connection.
struct WebSocketAnswer: ResponseHead {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var sent: PreparedRequest?
    var firstByte: Tick?
    var connection: ConnectionUse?
    /// The open connection, for a 101.
    let link: WebSocketLink?
    /// The start of a refusal's body, as text.
    let bodyPreview: String?
    /// The handshake's request headers as they went on the wire (the upgrade's own among them), for the monitors.
    let requestHeaders: HTTPFields

    /// A `Location` in the handshake's own schemes (`ws`, `wss`) is read as the `http` or `https` the handshake
    /// travels as, so a redirect to one is followed like a redirect to the other.
    func value(of name: HTTPField.Name) -> String? {
        guard name == .location, let location = headers[name] else { return headers[name] }
        return Session.httpForm(ofWebSocketURL: location)
    }

    /// Lets the answer go (a redirect followed, a refused credential): closes its connection, if it has one open.
    func discard() {
        link?.channel.channel.close(promise: nil)
    }
}

/// Opens WebSocket connections the way the session's other calls reach a server: straight, or through its HTTP
/// (`CONNECT`) or SOCKS5 proxy with credentials; over TLS with the host's ``TLSPolicy``, public-key pins checked
/// right after the handshake and before the upgrade request goes; then the opening handshake. AsyncHTTPClient has
/// no upgrade, so the connection is Courier's own, made with the same NIO pieces (see ``ConnectionRelay``).
struct WebSocketConnector: Sendable {
    let options: WebSocketOptions
    /// Where to connect for a host name instead of resolving it (``Configuration/hostAddresses``).
    let hostAddresses: [String: String]
    let group: any EventLoopGroup

    init(
        options: WebSocketOptions,
        hostAddresses: [String: String] = [:],
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.options = options
        self.hostAddresses = hostAddresses
        self.group = group
    }

    /// Connects for `request` (its URL `http` or `https`) and makes the handshake. The connection and TLS take at
    /// most the connect timeout, the proxy's tunnel, TLS and the server's answer the read-idle timeout; `cancellation`
    /// stops it.
    func open(_ request: PreparedRequest, cancellation: TransportCancellation) async throws -> WebSocketAnswer {
        let url = request.url
        guard let host = url.host(percentEncoded: false), !host.isEmpty, (1...65_535).contains(url.effectivePort)
        else { throw CourierError.invalidURL(url.absoluteString) }
        let target = (host: host, port: url.effectivePort)
        let handshake = try WebSocketHandshake(request, options: options)
        let tls = try url.isHTTPS ? Self.tlsContext(request.tls) : nil
        let pins = url.isHTTPS ? request.tls.pinning.publicKeyHashes : []
        let checksName = request.tls.validatesDomainName && !request.tls.allowsInvalidCertificates
        let ending = WebSocketEnding(url: url, timeouts: request.timeouts)
        let loop = group.next()
        let outcome = HandshakeOutcome(loop.makePromise())
        let options = self.options
        let proxy = request.proxy
        // The request, its Host and the certificate check keep the name; only the connection goes elsewhere.
        let hop = proxy.map { (host: $0.host, port: $0.port) } ?? (host: hostAddresses[host] ?? host, port: target.port)
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(TimeAmount(request.timeouts.connect))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // Each step adds the next once it is done: tunnel, then TLS, then the handshake.
                    let upgrade: (any Channel) throws -> Void = { channel in
                        let encoder = HTTPRequestEncoder()
                        let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes))
                        let gate = WebSocketHandshakeHandler.EndGate()
                        let handler = WebSocketHandshakeHandler(
                            handshake,
                            options: options,
                            ending: ending,
                            gate: gate,
                            httpHandlers: [encoder, decoder],
                            isSecure: tls != nil,
                            completed: { outcome.complete($0) }
                        )
                        try channel.pipeline.syncOperations.addHandlers([gate, encoder, decoder, handler])
                    }
                    let secure: (any Channel) throws -> Void = { channel in
                        guard let tls else { return try upgrade(channel) }
                        try channel.pipeline.syncOperations.addHandlers([
                            try NIOSSLClientHandler(context: tls, serverHostname: host.isIPAddress ? nil : host),
                            TLSReadiness(host: host, pins: pins, checksName: checksName, ready: upgrade) {
                                outcome.complete(.failure($0))
                            },
                        ])
                    }
                    guard let proxy else { return try secure(channel) }
                    let established: (any Channel) -> Void = { tunnel in
                        do { try secure(tunnel) } catch {
                            outcome.complete(.failure(TLSFailure.describe(error, host: host)))
                            tunnel.close(promise: nil)
                        }
                    }
                    let failed: (CourierError) -> Void = { outcome.complete(.failure($0)) }
                    switch proxy.kind {
                    case .http:
                        try channel.pipeline.syncOperations.addHandler(
                            HTTPConnectHandshake(
                                host: host,
                                port: target.port,
                                proxy: proxy,
                                established: established,
                                failed: failed
                            )
                        )
                    case .socks5:
                        try channel.pipeline.syncOperations.addHandler(
                            SOCKS5Handshake(
                                host: host,
                                port: target.port,
                                proxy: proxy,
                                established: established,
                                failed: failed
                            )
                        )
                    }
                }
            }
        let channel: any Channel
        do {
            channel = try await bootstrap.connect(host: hop.host, port: hop.port).get()
        } catch {
            let failure =
                if case .connectTimeout? = error as? ChannelError {
                    CourierError.timeout(
                        .connect,
                        after: request.timeouts.connect,
                        url: Redactor.standard.redact(url: url)
                    )
                } else { ending.failed(by: error) }
            outcome.complete(.failure(failure))
            throw failure
        }
        let timeout = request.timeouts.readIdle
        let timer = loop.scheduleTask(in: TimeAmount(timeout)) {
            // Only a handshake the timeout ended is closed: an upgrade that came first is the caller's connection,
            // though the caller (on a loaded machine) may not have woken to cancel this timer yet.
            if outcome.complete(
                .failure(.timeout(.readIdle, after: timeout, url: Redactor.standard.redact(url: url)))
            ) {
                channel.close(promise: nil)
            }
        }
        cancellation.onCancel {
            outcome.complete(.failure(.cancelled()))
            channel.close(promise: nil)
        }
        let answer: WebSocketHandshakeHandler.Outcome
        do {
            answer = try await outcome.future.get()
            timer.cancel()
        } catch {
            timer.cancel()
            channel.close(promise: nil)
            throw error as? CourierError ?? ending.failed(by: error)
        }
        switch answer {
        case .upgraded(let link, let head, let use):
            return WebSocketAnswer(
                status: .switchingProtocols,
                headers: ResponseFields.fields(head.headers),
                connection: use,
                link: link,
                bodyPreview: nil,
                requestHeaders: ResponseFields.fields(handshake.head.headers)
            )
        case .refused(let head, let body, let use):
            return WebSocketAnswer(
                status: HTTPResponse.Status(code: Int(head.status.code), reasonPhrase: head.status.reasonPhrase),
                headers: ResponseFields.fields(head.headers),
                connection: use,
                link: nil,
                bodyPreview: body.readableBytes > 0
                    ? CourierError.printable(String(decoding: body.readableBytesView, as: UTF8.self)) : nil,
                requestHeaders: ResponseFields.fields(handshake.head.headers)
            )
        }
    }

    /// The TLS context for `policy`, its files read now: a bad one fails the call with a typed error.
    private static func tlsContext(_ policy: TLSPolicy) throws -> NIOSSLContext {
        do {
            return try NIOSSLContext(configuration: policy.makeTLSConfiguration())
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError(code: .tls, message: "cannot set up TLS: \(error)", underlying: error)
        }
    }
}

/// The handshake's outcome, completed once: by the handshake handler, a failure on the way, the timeout, or a
/// cancel, whichever comes first.
private final class HandshakeOutcome: Sendable {
    private let promise: EventLoopPromise<WebSocketHandshakeHandler.Outcome>
    private let isComplete = Locked(false)

    init(_ promise: EventLoopPromise<WebSocketHandshakeHandler.Outcome>) {
        self.promise = promise
    }

    var future: EventLoopFuture<WebSocketHandshakeHandler.Outcome> { promise.futureResult }

    /// Completes the outcome with `result` unless it is complete already; returns whether this call completed it.
    @discardableResult
    func complete(_ result: Result<WebSocketHandshakeHandler.Outcome, CourierError>) -> Bool {
        let first = isComplete.withLock { complete in
            defer { complete = true }
            return !complete
        }
        guard first else {
            // A connection upgraded after a timeout or a cancel won: nobody will use it.
            if case .success(.upgraded(let link, _, _)) = result { link.channel.channel.close(promise: nil) }
            return false
        }
        promise.completeWith(result.mapError { $0 as any Error })
        return true
    }
}

/// Waits for the TLS handshake, checks that the certificate names the host (``ServerIdentity``) and that the
/// server's key is pinned, and hands the channel on.
private final class TLSReadiness: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let host: String
    private let pins: Set<String>
    private let checksName: Bool
    private let ready: (any Channel) throws -> Void
    private let failed: (CourierError) -> Void
    private var isDone = false

    init(
        host: String,
        pins: Set<String>,
        checksName: Bool,
        ready: @escaping (any Channel) throws -> Void,
        failed: @escaping (CourierError) -> Void
    ) {
        self.host = host
        self.pins = pins
        self.checksName = checksName
        self.ready = ready
        self.failed = failed
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent, !isDone {
            isDone = true
            do {
                if checksName { try ServerIdentity.check(context.pipeline.syncOperations, names: host) }
                try CertificatePinning.check(context, against: pins, host: host)
                let channel = context.channel
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                try ready(channel)
            } catch {
                failed(TLSFailure.describe(error, host: host))
                context.close(promise: nil)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !isDone else { return context.fireErrorCaught(error) }
        isDone = true
        failed(TLSFailure.describe(error, host: host))
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !isDone {
            isDone = true
            failed(
                CourierError(code: .connectionClosed, message: "\(host) closed the connection during the TLS handshake")
            )
        }
        context.fireChannelInactive()
    }
}
