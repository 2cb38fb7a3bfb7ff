import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How one connection ended, written once on its event loop (the first ending wins) and read by the caller's task
/// after its sequence ended.
final class WebSocketEnding: Sendable {
    enum Ending: Sendable {
        /// The closing handshake happened (or began): the server's close frame, or the one Courier sent.
        case closed(WebSocketClose)
        /// The connection failed: a protocol error, a drop, a cancellation.
        case failure(CourierError)
    }

    private let value = Locked<Ending?>(nil)
    /// Whether the connection delivered a message: a reconnecting call counts that as progress.
    private let delivered = Atomic<Bool>(false)
    /// What connection errors are reported against.
    private let url: URL
    private let timeouts: Timeouts

    init(url: URL, timeouts: Timeouts) {
        self.url = url
        self.timeouts = timeouts
    }

    /// Records `ending` unless one was recorded before.
    func record(_ ending: Ending) {
        value.withLock { if $0 == nil { $0 = ending } }
    }

    /// Notes that a message was delivered (on the event loop, for each; a relaxed store when already noted).
    func noteDelivery() {
        if !delivered.load(ordering: .relaxed) { delivered.store(true, ordering: .relaxed) }
    }

    /// Whether the connection delivered any message.
    var deliveredMessages: Bool { delivered.load(ordering: .relaxed) }

    /// The ending, once there is one.
    var ending: Ending? { value.withLock { $0 } }

    /// The close, when the connection was closed by a closing handshake.
    var close: WebSocketClose? {
        if case .closed(let close)? = ending { close } else { nil }
    }

    /// The failure, when the connection failed.
    var error: CourierError? {
        if case .failure(let error)? = ending { error } else { nil }
    }

    /// The typed error for a connection that `error` (a reset, a TLS failure) ended without a closing handshake.
    func dropped(by error: any Error) -> CourierError {
        var dropped = failed(by: error)
        dropped.webSocketCloseCode = .abnormalClosure
        return dropped
    }

    /// The typed error for `error`, which ended the connection before or during its handshake.
    func failed(by error: any Error) -> CourierError {
        var failure = AsyncHTTPClientTransport.translate(error, timeouts: timeouts, url: url, proxy: nil)
        failure.isStaleConnection = false  // a connection of its own, never a kept-alive one: nothing to resend
        return failure
    }
}
