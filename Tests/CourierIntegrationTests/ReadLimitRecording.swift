import Courier
import NIOCore

/// A caller's own connection initialiser that records, for each connection it runs on, the largest read its
/// receive allocator allows (0 when it is not SwiftNIO's adaptive one): what Courier set before it, in the tests of
/// `ReceiveBufferSize`.
func recordingReadLimits(into seen: Locked<[Int]>) -> @Sendable (any Channel) -> EventLoopFuture<Void> {
    { channel in
        channel.eventLoop.submit {
            let allocator = try channel.syncOptions?.getOption(ChannelOptions.recvAllocator)
            let adaptive = allocator as? AdaptiveRecvByteBufferAllocator
            seen.withLock { $0.append(adaptive?.maximum ?? 0) }
        }
    }
}
