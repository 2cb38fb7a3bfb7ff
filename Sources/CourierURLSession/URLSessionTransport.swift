public import Courier
import Foundation
import HTTPTypes
import NIOCore

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A transport over `URLSession` (FoundationNetworking on Linux), for code that wants nothing but Foundation.
///
/// Bodies stream in through the session delegate. Differences from `AsyncHTTPClientTransport`: URLSession
/// has no separate connect timeout (the read-idle timeout covers connecting, and counts whole seconds on Linux:
/// a fraction is rounded up), it decodes gzip itself (the session's ratio limit then cannot apply, only the size
/// limit), and a `PreparedBody/stream(_:length:)` body is written to a temporary file first and sent from there
/// (memory holds one chunk; a note on `SpooledBody` says why it is not handed over as it arrives), chunked even when
/// its length is known. The total timeout of
/// every request of the transport is watched by one task, not one per request.
public final class URLSessionTransport: Transport {
    private let session: URLSession
    private let delegate: StreamingDelegate
    private let deadlines = DeadlineTimers()

    /// Creates a transport with its own `URLSession`; redirects are left to the Courier session.
    public init(configuration: URLSessionConfiguration = .default) {
        let delegate = StreamingDelegate()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    /// Sends the request; see `Transport/send(_:cancellation:)`.
    public func send(_ request: PreparedRequest, cancellation: TransportCancellation) async throws -> TransportResponse
    {
        if let problem = request.url.portProblem {
            throw CourierError.invalidURL(request.url.absoluteString, reason: problem)
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.timeoutInterval = Self.interval(request.timeouts.readIdle)
        for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName) }
        var spooled: SpooledBody?
        switch request.body {
        case .empty: break
        case .bytes(let data): urlRequest.httpBody = data
        case .file(let url, _):
            guard let stream = InputStream(url: url) else {
                throw CourierError(
                    code: .unreadableBody,
                    message: "cannot read body file \"\(url.path(percentEncoded: false))\""
                )
            }
            urlRequest.httpBodyStream = stream
        case .stream(let chunks, _):
            // Spooling waits on the caller's chunks, so a cancel or the deadline must be able to end it too.
            let file = try await cancellation.runInTask { try await SpooledBody.write(chunks) }
            guard !cancellation.isCancelled else {
                file.remove()
                throw CourierError.cancelled()
            }
            guard let stream = InputStream(url: file.url) else {
                file.remove()
                throw CourierError(code: .fileAccess, message: "cannot read the spooled request body \(file.url.path)")
            }
            urlRequest.httpBodyStream = stream
            spooled = file
        }
        let spooledBody = spooled

        let task = session.dataTask(with: urlRequest)
        let exchange = delegate.register(task)
        let timer = deadlines.add(request.deadline) {
            exchange.fail(
                .timeout(.total, after: request.timeouts.total, url: Redactor.standard.redact(url: request.url))
            )
            task.cancel()
        }
        exchange.onFinish { [deadlines] in
            deadlines.cancel(timer)
            spooledBody?.remove()
        }
        // Until the body has been read: the head's wait and the body's both end when the exchange fails. Registered
        // before the task starts, so a cancel that came while the body was spooled still fails the exchange.
        cancellation.onCancel {
            exchange.fail(.cancelled())
            task.cancel()
        }
        task.resume()
        let head = try await exchange.head()
        let body = BodyStream(exchange: exchange, cancel: { task.cancel() })
        return TransportResponse(
            status: head.status,
            headers: head.headers,
            body: ByteStream(body),
            isContentDecoded: true
        )
    }

    /// The `timeoutInterval` for a read-idle timeout of `duration`: rounded up to whole seconds, at least one.
    /// FoundationNetworking on Linux counts the interval in whole seconds (a fraction is cut off, and 0.8 s times
    /// out at once), so rounding up is the closest it can keep to `duration` without firing early.
    package static func interval(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return max(Double(seconds + (attoseconds > 0 ? 1 : 0)), 1)
    }

    /// Releases what the transport holds; see `Transport/shutdown()`.
    public func shutdown() async throws {
        session.invalidateAndCancel()
    }
}

/// The delegate that routes each task's events to its ``Exchange``.
private final class StreamingDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let exchanges = Locked<[Int: Exchange]>([:])

    func register(_ task: URLSessionDataTask) -> Exchange {
        let exchange = Exchange()
        exchanges.withLock { $0[task.taskIdentifier] = exchange }
        return exchange
    }

    private func exchange(for task: URLSessionTask) -> Exchange? {
        exchanges.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if let http = response as? HTTPURLResponse {
            guard ResponseStatusGuard.isValid(code: http.statusCode) else {
                exchange(for: dataTask)?.fail(ResponseStatusGuard.refusal(String(http.statusCode)))
                completionHandler(.cancel)
                return
            }
            var fields = HTTPFields()
            for (key, value) in http.allHeaderFields {
                guard let key = key as? String, let name = HTTPField.Name(key), let value = value as? String else {
                    continue
                }
                fields.append(HTTPField(name: name, value: value))
            }
            exchange(for: dataTask)?.receive(
                head: .init(status: HTTPResponse.Status(code: http.statusCode), headers: fields)
            )
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        exchange(for: dataTask)?.receive(data: data)
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)  // the Courier session follows redirects itself
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let exchange = exchanges.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        if let error { exchange?.fail(Self.translate(error)) } else { exchange?.complete() }
    }

    static func translate(_ error: any Error) -> CourierError {
        let nsError = error as NSError
        guard nsError.domain == NSURLErrorDomain else {
            return CourierError(code: .transport, message: "\(error)", underlying: error)
        }
        switch nsError.code {
        case NSURLErrorCancelled: return .cancelled()
        case NSURLErrorTimedOut: return CourierError.timeout(.readIdle)
        case NSURLErrorNotConnectedToInternet:
            return CourierError(code: .offline, message: "not connected to a network", underlying: error)
        case NSURLErrorCannotConnectToHost, NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed:
            return CourierError(
                code: .connectionFailed,
                message: "could not connect: \(nsError.localizedDescription)",
                underlying: error
            )
        case NSURLErrorNetworkConnectionLost:  // what URLSession says when a kept-alive connection was closed under it
            var lost = CourierError(code: .connectionClosed, message: "the connection was lost", underlying: error)
            lost.isStaleConnection = true
            return lost
        case NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateUntrusted,
            NSURLErrorServerCertificateHasBadDate:
            return CourierError(code: .tls, message: "TLS failed: \(nsError.localizedDescription)", underlying: error)
        case NSURLErrorBadServerResponse, NSURLErrorCannotParseResponse, NSURLErrorCannotDecodeContentData:
            return CourierError(
                code: .invalidResponse,
                message: "the server sent a malformed response",
                underlying: error
            )
        default:
            return CourierError(code: .transport, message: nsError.localizedDescription, underlying: error)
        }
    }
}

/// One request's events, turned into an awaited head and a pull-based body. Buffers what the delegate
/// delivers before the consumer asks; URLSession has no backpressure, which is one reason it is not the default.
private final class Exchange: Sendable {
    struct Head: Sendable {
        var status: HTTPResponse.Status
        var headers: HTTPFields
    }

    private struct State {
        var head: Head?
        var chunks: [Data] = []
        var finished = false
        var error: CourierError?
        var headWaiter: CheckedContinuation<Head, any Error>?
        var bodyWaiter: CheckedContinuation<Data?, any Error>?
        var onFinish: (@Sendable () -> Void)?
    }

    private let state = Locked(State())

    func onFinish(_ action: @escaping @Sendable () -> Void) { state.withLock { $0.onFinish = action } }

    func head() async throws -> Head {
        try await withCheckedThrowingContinuation { continuation in
            state.withLock { state in
                if let head = state.head {
                    continuation.resume(returning: head)
                } else if let error = state.error {
                    continuation.resume(throwing: error)
                } else if state.finished {
                    continuation.resume(throwing: CourierError(code: .invalidResponse, message: "no response head"))
                } else {
                    state.headWaiter = continuation
                }
            }
        }
    }

    func nextChunk() async throws -> Data? {
        try await withCheckedThrowingContinuation { continuation in
            state.withLock { state in
                if !state.chunks.isEmpty {
                    continuation.resume(returning: state.chunks.removeFirst())
                } else if let error = state.error {
                    continuation.resume(throwing: error)
                } else if state.finished {
                    continuation.resume(returning: nil)
                } else {
                    state.bodyWaiter = continuation
                }
            }
        }
    }

    func receive(head: Head) {
        state.withLock { state in
            state.head = head
            state.headWaiter?.resume(returning: head)
            state.headWaiter = nil
        }
    }

    func receive(data: Data) {
        state.withLock { state in
            if let waiter = state.bodyWaiter {
                state.bodyWaiter = nil
                waiter.resume(returning: data)
            } else {
                state.chunks.append(data)
            }
        }
    }

    func complete() { finish(with: nil) }

    func fail(_ error: CourierError) { finish(with: error) }

    private func finish(with error: CourierError?) {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.finished else { return nil }
            state.finished = true
            state.error = error
            if let waiter = state.headWaiter {
                state.headWaiter = nil
                waiter.resume(throwing: error ?? CourierError(code: .invalidResponse, message: "no response head"))
            }
            if let waiter = state.bodyWaiter {
                state.bodyWaiter = nil
                if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
            }
            defer { state.onFinish = nil }
            return state.onFinish
        }
        action?()
    }
}

/// The body of one exchange as chunks; cancelling the consuming task cancels the URLSession task.
private struct BodyStream: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let exchange: Exchange
    let cancel: @Sendable () -> Void

    func makeAsyncIterator() -> Iterator { Iterator(exchange: exchange, cancel: cancel) }

    struct Iterator: AsyncIteratorProtocol {
        let exchange: Exchange
        let cancel: @Sendable () -> Void

        mutating func next() async throws -> ByteBuffer? {
            let exchange = self.exchange
            let cancel = self.cancel
            let chunk = try await withTaskCancellationHandler {
                try await exchange.nextChunk()
            } onCancel: {
                exchange.fail(.cancelled())
                cancel()
            }
            return chunk.map { ByteBuffer(bytes: $0) }
        }
    }
}
