import Courier
import NIOCore
import NIOEmbedded
import NIOHTTP1

/// Response bytes through NIO's decoder and Courier's status guard, set up as on an AsyncHTTPClient connection:
/// whatever the bytes, no head outside 100–999 passes, and no body or end passes before a final head (the states
/// AsyncHTTPClient's request state machine traps in). Nothing traps here either.
enum ResponseHeadFuzz {
    static func run(_ input: FuzzInput) throws(InvariantViolation) {
        let channel = EmbeddedChannel()
        defer {
            _ = try? channel.finish()
            // A channel the guard closed tears its pipeline down in tasks on its loop; an embedded loop runs them
            // only when asked, and until then the pipeline and the channel hold each other.
            channel.embeddedEventLoop.run()
        }
        do {
            let sync = channel.pipeline.syncOperations
            try sync.addHandler(HTTPRequestEncoder())
            try sync.addHandler(
                ByteToMessageHandler(
                    HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)
                )
            )
            try sync.addHandler(ResponseStatusGuard())
            try channel.writeOutbound(
                HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/"))
            )
            try channel.writeOutbound(HTTPClientRequestPart.end(nil))
        } catch {
            return
        }
        _ = try? channel.writeInbound(ByteBuffer(bytes: input.bytes))
        var awaitingFinalHead = true
        while let part = try? channel.readInbound(as: HTTPClientResponsePart.self) {
            switch part {
            case .head(let head):
                let code = Int(head.status.code)
                try require(ResponseStatusGuard.isValid(code: code), "a head with status \(code) passed the guard")
                if code >= 200 || code == 101 { awaitingFinalHead = false }
            case .body, .end:
                try require(!awaitingFinalHead, "a body or an end passed before a final head")
                if case .end = part { awaitingFinalHead = true }
            }
        }
    }
}
