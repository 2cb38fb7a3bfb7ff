public import Courier
public import HTTPTypes
import NIOCore

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A transport that answers from a closure, for unit tests of code that uses Courier: no sockets at all.
///
/// ```swift
/// let stub = StubTransport { request in
///     request.url.path() == "/users/1" ? .json(#"{"id":1}"#) : .status(404)
/// }
/// let session = Session(configuration: config, transport: stub)
/// ```
public final class StubTransport: Transport {
    /// A canned answer.
    public struct Answer: Sendable {
        /// The status.
        public var status: HTTPResponse.Status
        /// The headers.
        public var headers: HTTPFields
        /// The body.
        public var body: Data

        /// Creates an answer.
        public init(status: HTTPResponse.Status = .ok, headers: HTTPFields = [:], body: Data = Data()) {
            self.status = status
            self.headers = headers
            self.body = body
        }

        /// A 200 with a JSON body.
        public static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Answer {
            Answer(status: status, headers: [.contentType: "application/json"], body: Data(text.utf8))
        }

        /// An empty answer with this status.
        public static func status(_ status: HTTPResponse.Status) -> Answer { Answer(status: status) }
    }

    private let answer: @Sendable (PreparedRequest) async throws -> Answer
    private let recorded = Locked<[PreparedRequest]>([])

    /// Creates a stub answering every request with `answer`; throw a ``/Courier/CourierError`` to simulate a failure.
    public init(_ answer: @escaping @Sendable (PreparedRequest) async throws -> Answer) {
        self.answer = answer
    }

    /// Every request sent so far, in order.
    public var requests: [PreparedRequest] { recorded.withLock { $0 } }

    /// Sends the request; see ``/Courier/Transport/send(_:cancellation:)``. The closure runs in a task of its own,
    /// which `cancellation` cancels.
    public func send(_ request: PreparedRequest, cancellation: TransportCancellation) async throws -> TransportResponse
    {
        recorded.withLock { $0.append(request) }
        let answer = try await cancellation.runInTask { [self] in try await self.answer(request) }
        return TransportResponse(
            status: answer.status,
            headers: answer.headers,
            body: ByteStream(chunks: answer.body.isEmpty ? [] : [ByteBuffer(bytes: answer.body)])
        )
    }

    /// Releases what the transport holds; see ``/Courier/Transport/shutdown()``.
    public func shutdown() async throws {}
}
