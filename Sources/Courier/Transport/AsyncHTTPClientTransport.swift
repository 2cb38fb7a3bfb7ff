public import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The default transport: AsyncHTTPClient, with its connection pool, HTTP/1.1 and HTTP/2.
///
/// AsyncHTTPClient fixes connect and read timeouts per client, so this transport keeps one client per distinct
/// pair a request asks for (almost always just the session's own); the total timeout is AsyncHTTPClient's
/// per-request deadline, which covers the body too.
public final class AsyncHTTPClientTransport: Transport {
    private struct ClientKey: Hashable {
        var connect: Duration
        var readIdle: Duration
    }

    private let baseConfiguration: HTTPClient.Configuration
    private let clients = Mutex<[ClientKey: HTTPClient]>([:])
    private let isShutDown = Atomic<Bool>(false)

    /// Creates a transport. Redirects, decompression and connection retries are turned off in `configuration`:
    /// the session does all three, with its own limits and retry policy (so a refused connection fails at once
    /// instead of being retried silently until the connect timeout).
    public init(configuration: HTTPClient.Configuration = HTTPClient.Configuration()) {
        var configuration = configuration
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.connectionPool.retryConnectionEstablishment = false
        self.baseConfiguration = configuration
    }

    /// Sends the request; see ``Transport/send(_:)``.
    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let client = try client(for: request.timeouts)
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        outgoing.headers = HTTPHeaders(request.headers.map { ($0.name.rawName, $0.value) })
        switch request.body {
        case .empty: break
        case .bytes(let data): outgoing.body = .bytes(ByteBuffer(bytes: data))
        case .file, .stream:
            let length: HTTPClientRequest.Body.Length = request.body.length.map { .known($0) } ?? .unknown
            outgoing.body = .stream(request.body.chunks(), length: length)
        }
        let deadline = NIODeadline.now() + TimeAmount(ContinuousClock.now.duration(to: request.deadline))
        do {
            let response = try await client.execute(outgoing, deadline: deadline)
            var fields = HTTPFields()
            for (name, value) in response.headers {
                if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
            }
            let status = HTTPResponse.Status(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase)
            let timeouts = request.timeouts
            let url = request.url
            return TransportResponse(status: status, headers: fields, body: ByteStream(TranslatingBody(base: response.body, timeouts: timeouts, url: url)))
        } catch {
            throw Self.translate(error, timeouts: request.timeouts, url: request.url)
        }
    }

    /// Releases what the transport holds; see ``Transport/shutdown()``.
    public func shutdown() async throws {
        guard !isShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let all = clients.withLock { clients in
            defer { clients.removeAll() }
            return Array(clients.values)
        }
        for client in all { try await client.shutdown() }
    }

    private func client(for timeouts: Timeouts) throws -> HTTPClient {
        let key = ClientKey(connect: timeouts.connect, readIdle: timeouts.readIdle)
        return try clients.withLock { clients in
            if let client = clients[key] { return client }
            guard !isShutDown.load(ordering: .acquiring) else {
                throw CourierError(code: .sessionClosed, message: "the transport has been shut down")
            }
            var configuration = baseConfiguration
            configuration.timeout = .init(connect: TimeAmount(timeouts.connect), read: TimeAmount(timeouts.readIdle))
            let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
            clients[key] = client
            return client
        }
    }

    /// Maps AsyncHTTPClient's and SwiftNIO's errors to ``CourierError``.
    static func translate(_ error: any Error, timeouts: Timeouts, url: URL) -> CourierError {
        if let error = error as? CourierError { return error }
        let shownURL = Redactor.standard.redact(url: url)
        if error is CancellationError { return .cancelled() }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled, .requestStreamCancelled: return .cancelled()
            case .connectTimeout, .tlsHandshakeTimeout: return .timeout(.connect, after: timeouts.connect, url: shownURL)
            case .readTimeout: return .timeout(.readIdle, after: timeouts.readIdle, url: shownURL)
            case .deadlineExceeded: return .timeout(.total, after: timeouts.total, url: shownURL)
            case .remoteConnectionClosed:
                return CourierError(code: .connectionClosed, message: "the server closed the connection before the response was complete", underlying: error)
            case .alreadyShutdown: return CourierError(code: .sessionClosed, message: "the transport has been shut down", underlying: error)
            case .invalidURL, .emptyHost, .emptyScheme: return .invalidURL(url.absoluteString)
            case .bodyLengthMismatch:
                return CourierError(code: .encoding, message: "the request body's length differs from its declared length", underlying: error)
            default: break
            }
            if "\(error)".contains("unsupportedScheme") { return .invalidURL(url.absoluteString, reason: "unsupported scheme") }
        }
        if let error = error as? IOError {
            if error.errnoCode == ECONNRESET || error.errnoCode == EPIPE {
                return CourierError(code: .connectionReset, message: "the connection was reset by the peer", underlying: error)
            }
            if error.errnoCode == ECONNREFUSED {
                return CourierError(code: .connectionFailed, message: "connection refused by \(shownURL)", underlying: error)
            }
        }
        if error is NIOConnectionError || error is ChannelError && "\(error)".contains("connect") {
            return CourierError(code: .connectionFailed, message: "could not connect to \(shownURL)", underlying: error)
        }
        if let parserError = error as? HTTPParserError, parserError == .invalidEOFState {
            return CourierError(code: .connectionClosed, message: "the server closed the connection before the body was complete", underlying: error)
        }
        if error is HTTPParserError || error is NIOTooManyBytesError {
            return CourierError(code: .invalidResponse, message: "the server sent a malformed response (\(error))", underlying: error)
        }
        if error is ChannelError {
            return CourierError(code: .connectionClosed, message: "the connection closed unexpectedly (\(error))", underlying: error)
        }
        let text = String(describing: type(of: error))
        if text.contains("SSL") || text.contains("TLS") || text.contains("BoringSSL") {
            return CourierError(code: .tls, message: "TLS failed: \(error)", underlying: error)
        }
        return CourierError(code: .transport, message: "\(error)", underlying: error)
    }
}

/// AsyncHTTPClient's body with its errors translated.
private struct TranslatingBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: HTTPClientResponse.Body
    let timeouts: Timeouts
    let url: URL

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator(), timeouts: timeouts, url: url) }

    struct Iterator: AsyncIteratorProtocol {
        var base: HTTPClientResponse.Body.AsyncIterator
        let timeouts: Timeouts
        let url: URL

        mutating func next() async throws -> ByteBuffer? {
            do { return try await base.next() } catch {
                throw AsyncHTTPClientTransport.translate(error, timeouts: timeouts, url: url)
            }
        }
    }
}

extension TimeAmount {
    /// A NIO time amount from a Swift duration, in nanoseconds.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds.multipliedReportingOverflow(by: 1_000_000_000).overflow
            ? Int64.max : seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
