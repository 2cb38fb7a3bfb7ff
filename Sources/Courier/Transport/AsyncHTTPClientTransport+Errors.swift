import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSOCKS
import NIOSSL

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension AsyncHTTPClientTransport {
    /// Maps AsyncHTTPClient's and SwiftNIO's errors to ``CourierError``, marking the ones that say a pooled
    /// connection was already closed when the request went out (``CourierError/isStaleConnection``). `proxy` is
    /// the proxy the request went through, which a refusal names.
    static func translate(_ error: any Error, timeouts: Timeouts, url: URL, proxy: Proxy?) -> CourierError {
        if let error = error as? CourierError { return error }
        if let refusal = refusal(error, by: proxy, url: url) { return refusal }
        var failure = mapped(error, timeouts: timeouts, url: url)
        failure.isStaleConnection = isStaleConnection(error)
        return failure
    }

    /// Whether `error` is what a kept-alive connection the server had closed gives: the write found it closed, it
    /// closed before any response byte, or the server's kernel answered the request with a reset.
    private static func isStaleConnection(_ error: any Error) -> Bool {
        if let error = error as? ChannelError { return error == .ioOnClosedChannel }
        if let error = error as? HTTPClientError { return error == .remoteConnectionClosed }
        if let error = error as? IOError { return error.errnoCode == ECONNRESET || error.errnoCode == EPIPE }
        return false
    }

    /// The proxy's refusal `error` is, in words that name the proxy when it is known; `nil` for any other error.
    private static func refusal(_ error: any Error, by proxy: Proxy?, url: URL) -> CourierError? {
        var refusal: CourierError
        switch error {
        case let error as HTTPClientError where error == .proxyAuthenticationRequired:
            refusal = Proxy.authenticationRefusal(by: proxy)
        case let error as HTTPClientError where error == .invalidProxyResponse:
            refusal = Proxy.refusal(by: proxy, "refused to open a tunnel to \(Redactor.standard.redact(url: url))")
        case is SOCKSError.InvalidAuthenticationSelection, is SOCKSError.NoValidAuthenticationMethod:
            refusal = Proxy.authenticationMethodRefusal(by: proxy)
        case let error as SOCKSError.ConnectionFailed:
            let host = url.host(percentEncoded: false) ?? "the host"
            refusal = Proxy.refusal(
                by: proxy,
                "could not connect to \(host) (\(SOCKS5Handshake.reason(error.reply.value)))"
            )
        default:
            return nil
        }
        refusal.underlying = error
        return refusal
    }

    private static func mapped(_ error: any Error, timeouts: Timeouts, url: URL) -> CourierError {
        let shownURL = Redactor.standard.redact(url: url)
        if error is CancellationError { return .cancelled() }
        if error is StalledBodyWrite { return .timeout(.writeIdle, after: timeouts.readIdle, url: shownURL) }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled, .requestStreamCancelled: return .cancelled()
            case .connectTimeout, .tlsHandshakeTimeout:
                return .timeout(.connect, after: timeouts.connect, url: shownURL)
            case .readTimeout: return .timeout(.readIdle, after: timeouts.readIdle, url: shownURL)
            case .deadlineExceeded: return .timeout(.total, after: timeouts.total, url: shownURL)
            case .remoteConnectionClosed:
                return CourierError(
                    code: .connectionClosed,
                    message: "the server closed the connection before the response was complete",
                    underlying: error
                )
            case .alreadyShutdown:
                return CourierError(
                    code: .sessionClosed,
                    message: "the transport has been shut down",
                    underlying: error
                )
            case .invalidURL, .emptyHost, .emptyScheme: return .invalidURL(url.absoluteString)
            case .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
                return .timeout(.connect, after: timeouts.connect, url: shownURL)
            case .bodyLengthMismatch:
                return CourierError(
                    code: .encoding,
                    message: "the request body's length differs from its declared length",
                    underlying: error
                )
            default: break
            }
            if "\(error)".contains("unsupportedScheme") {
                return .invalidURL(url.absoluteString, reason: "unsupported scheme")
            }
        }
        if let error = error as? IOError {
            if error.errnoCode == ECONNRESET || error.errnoCode == EPIPE {
                return CourierError(
                    code: .connectionReset,
                    message: "the connection was reset by the peer",
                    underlying: error
                )
            }
            if error.errnoCode == ECONNREFUSED {
                return CourierError(
                    code: .connectionFailed,
                    message: "connection refused by \(shownURL)",
                    underlying: error
                )
            }
        }
        if let error = error as? NIOConnectionError, !error.connectionErrors.isEmpty,
            error.connectionErrors.allSatisfy({
                [ENETUNREACH, EHOSTUNREACH].contains(($0.error as? IOError)?.errnoCode)
            })
        {
            return CourierError(
                code: .offline,
                message: "no route to \(shownURL): the network is unreachable",
                underlying: error
            )
        }
        if let error = error as? NIOConnectionError, error.connectionErrors.isEmpty,
            error.dnsAError != nil || error.dnsAAAAError != nil
        {
            var failure = CourierError(
                code: .connectionFailed,
                message: "could not resolve the host name \"\(CourierError.printable(error.host))\"",
                underlying: error
            )
            failure.isUnresolvedHost = true
            return failure
        }
        if error is NIOConnectionError || error is ChannelError && "\(error)".contains("connect") {
            return CourierError(code: .connectionFailed, message: "could not connect to \(shownURL)", underlying: error)
        }
        if let closed = error as? NIOHTTP2Errors.StreamClosed {
            if closed.errorCode == .refusedStream { return UnprocessedRequests.unprocessed(closed) }
            return CourierError(
                code: .connectionReset,
                message: "the server reset the HTTP/2 stream (\(closed.errorCode))",
                underlying: error
            )
        }
        if let parserError = error as? HTTPParserError, parserError == .invalidEOFState {
            return CourierError(
                code: .connectionClosed,
                message: "the server closed the connection before the body was complete",
                underlying: error
            )
        }
        if error is HTTPParserError || error is NIOTooManyBytesError {
            return CourierError(
                code: .invalidResponse,
                message: "the server sent a malformed response (\(error))",
                underlying: error
            )
        }
        if error is ChannelError {
            return CourierError(
                code: .connectionClosed,
                message: "the connection closed unexpectedly (\(error))",
                underlying: error
            )
        }
        if error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError {
            return TLSFailure.describe(error, host: url.host(percentEncoded: false) ?? "the server")
        }
        return CourierError(code: .transport, message: "\(error)", underlying: error)
    }
}

extension TimeAmount {
    /// A NIO time amount from a Swift duration, in nanoseconds.
    init(_ duration: Duration) {
        self = .nanoseconds(duration.clampedNanoseconds)
    }
}
