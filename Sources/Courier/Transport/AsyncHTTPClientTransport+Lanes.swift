import Foundation
import NIOCore
import NIOPosix
import Synchronization

extension AsyncHTTPClientTransport {
    /// The transport's lanes, one per event loop (see ``AsyncHTTPClientTransport``).
    final class Lanes: Sendable {
        /// The lane an exchange goes through.
        struct Choice {
            /// The index of the lane.
            let index: Int
            /// Whether the lanes share the per-host connection limit (HTTP/1.1, lanes in turn) or this lane has all
            /// of it (a host that may speak HTTP/2, on its own lane).
            let sharesLimit: Bool
            /// Whether the request may go over HTTP/2 (TLS, and the policy allows it), whose one connection to a
            /// host carries every stream on one loop.
            let mayMultiplex: Bool
        }

        private let loops: [any EventLoop]
        private let turn = Atomic<Int>(0)

        init(_ group: MultiThreadedEventLoopGroup = .singleton) {
            loops = Array(group.makeIterator())
        }

        var count: Int { loops.count }

        /// The event loop of lane `index`.
        func loop(_ index: Int) -> any EventLoop { loops[index] }

        /// The lane for `request`: one that can only use HTTP/1.1 takes the lanes in turn; one that may use HTTP/2
        /// keeps to its host's lane. (Taking the least busy lane instead, to keep one request at a time on one warm
        /// loop, measured no better.)
        func take(for request: TransportRequest) -> Choice {
            let mayMultiplex = request.httpVersion == .automatic && request.isHTTPS
            guard loops.count > 1 else { return Choice(index: 0, sharesLimit: false, mayMultiplex: mayMultiplex) }
            if mayMultiplex {
                var hasher = Hasher()
                hasher.combine(request.url.host())
                hasher.combine(request.url.port)
                return Choice(index: Int(UInt(bitPattern: hasher.finalize()) % UInt(loops.count)), sharesLimit: false, mayMultiplex: true)
            }
            let next = turn.wrappingAdd(1, ordering: .relaxed).oldValue
            return Choice(index: Int(UInt(bitPattern: next) % UInt(loops.count)), sharesLimit: true, mayMultiplex: false)
        }
    }
}
