import AsyncHTTPClient
import NIOCore

/// How much one read of a connection's socket may take: SwiftNIO's adaptive allocator, starting at 2 KiB (so a
/// small answer costs no more memory than before) and growing up to 256 KiB while reads keep filling the buffer,
/// where SwiftNIO's default stops at 64 KiB.
///
/// A large body then arrives in a quarter of the reads, each going once through the socket, TLS and the HTTP
/// decoder: `courier get` of 1 GiB from a loopback server made 18,236 `read` calls before and 4,266 after, and its
/// time to stdout went from 1.35 × curl's to 1.08 × (issue 57, `courier-bench --scenario cli-get-1g`). A connection
/// holds at most one buffer of this size while it reads.
enum ReceiveBufferSize {
    /// The largest read, in bytes.
    static let maximum = 256 * 1024

    /// `configuration` with the allocator set on every HTTP/1.1 and HTTP/2 connection, ahead of any initialiser
    /// the caller set (which still runs, after).
    static func installing(on configuration: HTTPClient.Configuration) -> HTTPClient.Configuration {
        ConnectionInitializers.installingOnEveryConnection(setAllocator, on: configuration)
    }

    @Sendable private static func setAllocator(_ channel: any Channel) throws {
        try channel.syncOptions?.setOption(
            ChannelOptions.recvAllocator,
            value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: maximum)
        )
    }
}
