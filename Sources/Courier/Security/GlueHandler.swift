package import NIOCore

/// One half of a pair that relays bytes between two channels on the same event loop, with backpressure: a side
/// reads only while its partner can take more (the pattern of SwiftNIO's connect-proxy example).
///
/// When one side closes, the partner first shuts its output, which waits for what is already queued to reach
/// the socket, and then closes; so a response the server sent just before closing is delivered whole.
package final class GlueHandler {
    private var partner: GlueHandler?
    private var context: ChannelHandlerContext?
    private var pendingRead = false

    private init() {}

    /// Two handlers joined to each other, one for each channel.
    package static func matchedPair() -> (GlueHandler, GlueHandler) {
        let first = GlueHandler()
        let second = GlueHandler()
        first.partner = second
        second.partner = first
        return (first, second)
    }

    private func partnerWrite(_ data: NIOAny) { context?.write(data, promise: nil) }

    private func partnerFlush() { context?.flush() }

    private func partnerClose() {
        guard let context else { return }
        let channel = context.channel
        let closed = context.eventLoop.makePromise(of: Void.self)
        context.close(mode: .output, promise: closed)
        closed.futureResult.whenComplete { _ in channel.close(promise: nil) }
    }

    private func partnerBecameWritable() {
        if pendingRead {
            pendingRead = false
            context?.read()
        }
    }

    private var partnerIsWritable: Bool { context?.channel.isWritable ?? false }
}

extension GlueHandler: ChannelDuplexHandler {
    package typealias InboundIn = NIOAny
    package typealias OutboundIn = NIOAny
    package typealias OutboundOut = NIOAny

    package func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    package func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) { partner?.partnerWrite(data) }

    package func channelReadComplete(context: ChannelHandlerContext) { partner?.partnerFlush() }

    package func channelInactive(context: ChannelHandlerContext) { partner?.partnerClose() }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        partner?.partnerClose()
        context.close(promise: nil)
    }

    package func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.partnerBecameWritable() }
    }

    package func read(context: ChannelHandlerContext) {
        if let partner, partner.partnerIsWritable {
            context.read()
        } else {
            pendingRead = true
        }
    }
}
