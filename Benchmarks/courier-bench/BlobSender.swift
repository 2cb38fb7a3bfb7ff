import Courier
import NIOCore
import NIOHTTP1

/// Streams `/blob/N` on the event loop: N bytes cut from one shared 1 MiB buffer, as fast as the connection
/// takes them (writing only while it is writable) or paced to `?rate=B` bytes per second. Honours one
/// `Range` (206 with `Content-Range`), answers `HEAD`, and sends a fixed `ETag`, like a static file server.
/// `/events/N` goes out the same way, from a buffer of N server-sent events.
final class BlobSender {
    private static let blob: ByteBuffer = {
        var buffer = ByteBufferAllocator().buffer(capacity: 1 << 20)
        for index in 0..<(1 << 20) { buffer.writeInteger(UInt8(truncatingIfNeeded: index &* 31 &+ 7)) }
        return buffer
    }()

    /// The body of `/events/N`: events `id: I`, `event: tick`, `data: {"n":I}`, made once per N.
    private static let eventStreams = Locked<[Int: ByteBuffer]>([:])

    static func events(_ count: Int) -> ByteBuffer {
        eventStreams.withLock { streams in
            if let stream = streams[count] { return stream }
            var stream = ByteBuffer()
            for id in 1...max(1, count) { stream.writeString("id: \(id)\nevent: tick\ndata: {\"n\":\(id)}\n\n") }
            streams[count] = stream
            return stream
        }
    }

    private let chunk: ByteBuffer
    private let contentType: String

    private var next: Int
    private let end: Int
    private let rate: Int?
    private let head: HTTPRequestHead
    private let size: Int
    private var waitingForTimer = false

    /// A sender of `size` bytes of the blob, or of all of `source` (as `contentType`) when one is given.
    init(head: HTTPRequestHead, size: Int, source: ByteBuffer? = nil, contentType: String = "application/octet-stream")
    {
        let size = source?.readableBytes ?? size
        self.head = head
        self.chunk = source ?? Self.blob
        self.contentType = contentType
        self.size = size
        let query = head.uri.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        rate = query.split(separator: "&").first { $0.hasPrefix("rate=") }.flatMap { Int($0.dropFirst("rate=".count)) }
        var range = 0..<size
        if let header = head.headers.first(name: "Range"), header.hasPrefix("bytes="), !header.contains(",") {
            let bounds = header.dropFirst("bytes=".count).split(
                separator: "-",
                maxSplits: 1,
                omittingEmptySubsequences: false
            )
            if bounds.count == 2, let first = Int(bounds[0]), first < size {
                let last = bounds[1].isEmpty ? size - 1 : min(Int(bounds[1]) ?? size - 1, size - 1)
                if last >= first { range = first..<(last + 1) }
            }
        }
        next = range.lowerBound
        end = range.upperBound
    }

    /// Sends the head and starts the body.
    func start(context: ChannelHandlerContext) {
        let partial = end - next != size
        var headers = HTTPHeaders([
            ("Content-Type", contentType), ("Content-Length", String(end - next)),
            ("Accept-Ranges", "bytes"), ("ETag", "\"blob-\(size)\""),
        ])
        if partial { headers.add(name: "Content-Range", value: "bytes \(next)-\(end - 1)/\(size)") }
        let status: HTTPResponseStatus = partial ? .partialContent : .ok
        context.write(
            NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
            promise: nil
        )
        if head.method == .HEAD { next = end }
        send(context: context)
    }

    /// Writes chunks while the connection is writable (or one per tick when paced), then the end.
    func send(context: ChannelHandlerContext) {
        guard !waitingForTimer, next <= end else { return }
        let chunkSize = rate.map { max(1024, min(64 * 1024, $0 / 20)) } ?? 256 * 1024
        while next < end, context.channel.isWritable {
            let count = min(chunkSize, end - next)
            let offset = next % chunk.readableBytes
            let slice = chunk.getSlice(at: offset, length: min(count, chunk.readableBytes - offset)) ?? chunk
            next += slice.readableBytes
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(slice))), promise: nil)
            if let rate {
                waitingForTimer = true
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.eventLoop.scheduleTask(
                    in: .nanoseconds(Int64(slice.readableBytes) * 1_000_000_000 / Int64(max(1, rate)))
                ) {
                    let (sender, context) = loopBound.value
                    sender.waitingForTimer = false
                    sender.send(context: context)
                }
                return
            }
        }
        if next == end {
            next = end + 1  // the end is written once
            context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil)), promise: nil)
        }
    }
}
