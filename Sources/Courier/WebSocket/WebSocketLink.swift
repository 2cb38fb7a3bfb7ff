import NIOCore

/// One open WebSocket connection as the session holds it: the caller's `NIOAsyncChannel`, the handler running
/// the protocol on its event loop, what the handshake agreed to, and how it ended. It stands in the call's cancel
/// slot while the connection is open, so the pool's controls and the caller's cancellation close it.
final class WebSocketLink: RequestCancellable {
    let channel: NIOAsyncChannel<WebSocketMessage, WebSocketOutbound>
    private let handler: NIOLoopBound<WebSocketChannelHandler>
    let agreement: WebSocketHandshake.Agreement
    let ending: WebSocketEnding

    init(
        channel: NIOAsyncChannel<WebSocketMessage, WebSocketOutbound>,
        handler: NIOLoopBound<WebSocketChannelHandler>,
        agreement: WebSocketHandshake.Agreement,
        ending: WebSocketEnding
    ) {
        self.channel = channel
        self.handler = handler
        self.agreement = agreement
        self.ending = ending
    }

    /// Closes with ``WebSocketCloseCode/goingAway``; the caller's sequence ends with
    /// ``CourierError/Code/cancelled``.
    func cancel() {
        let handler = self.handler
        channel.channel.eventLoop.execute { handler.value.cancel() }
    }
}
