import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension AsyncHTTPClientTransport {
    /// Maps AsyncHTTPClient's and SwiftNIO's errors to ``CourierError``, marking the ones that say a pooled
    /// connection was already closed when the request went out (``CourierError/isStaleConnection``).
    static func translate(_ error: any Error, timeouts: Timeouts, url: URL) -> CourierError {
        if let error = error as? CourierError { return error }
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
            case .proxyAuthenticationRequired:
                return CourierError(
                    code: .connectionFailed,
                    message: "the proxy refused the credentials (407 Proxy Authentication Required)",
                    underlying: error
                )
            case .invalidProxyResponse:
                return CourierError(
                    code: .connectionFailed,
                    message: "the proxy refused to open a tunnel to \(shownURL)",
                    underlying: error
                )
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
