import CompressNIO
package import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Decodes a gzip or deflate body chunk by chunk into pieces of at most 64 KiB, refusing it as soon as it passes
/// the size or ratio limit, so a decompression bomb costs at most one piece's worth of work and memory past the
/// limit. The test server uses it too, to check what a client compressed.
package final class BodyDecompressor {
    enum Encoding: String {
        case gzip, deflate
    }

    private let decompressor: ZlibDecompressor
    private let limits: ResponseLimits
    private let encoding: Encoding
    /// Compressed input fed and not yet decoded.
    private var pending: ByteBuffer?
    private var decompressedBytes = 0
    /// The bytes in and out since the ratio was last checked: the ratio is checked per window of
    /// ``ResponseLimits/ratioCheckFloor`` decoded bytes, so a bomb after megabytes of honest text is found as
    /// soon as it starts, not once it has outgrown the text before it.
    private var window = (compressed: 0, decompressed: 0)
    private var finished = false

    /// `nil` when `contentEncoding` names nothing Courier decodes (identity, or an encoding it leaves alone).
    /// Throws ``CourierError/Code/decompression`` for stacked codings (`gzip, gzip`): Courier decodes one layer,
    /// and handing back a body that is still encoded as if it were decoded would be wrong.
    package init?(contentEncoding: String?, limits: ResponseLimits) throws {
        guard let coding = try Self.coding(of: contentEncoding) else { return nil }
        encoding = coding
        // RFC 9110's "deflate" is the zlib format; servers that send raw deflate are rare, and zlib's window bits
        // of 15 + 32 would auto-detect, but CompressNIO asks for the algorithm, so zlib it is.
        self.decompressor = try ZlibDecompressor(algorithm: encoding == .gzip ? .gzip : .zlib)
        self.limits = limits
    }

    /// The coding a decompressor for `contentEncoding` would decode, checked as ``init(contentEncoding:limits:)``
    /// checks it, without setting up zlib.
    static func coding(of contentEncoding: String?) throws(CourierError) -> Encoding? {
        guard let contentEncoding else { return nil }
        let codings = contentEncoding.split(separator: ",").map { $0.trimmingSpaces().lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
        guard codings.count <= 1 else {
            throw CourierError(
                code: .decompression,
                message: "stacked content codings (\(codings.joined(separator: ", "))) are not supported"
            )
        }
        switch codings.first {
        case "gzip", "x-gzip": return .gzip
        case "deflate": return .deflate
        default: return nil
        }
    }

    /// The most one piece of output holds: a body that expands a thousandfold still arrives in pieces this size,
    /// so whoever reads it holds one piece at a time.
    package static let outputChunkBytes = 64 * 1024

    /// Hands the decoder the next chunk of the compressed body; read what it decodes to with ``nextOutput()``
    /// until that returns `nil`, before feeding the next chunk.
    package func feed(_ input: ByteBuffer) {
        guard input.readableBytes > 0 else { return }
        var input = input
        if pending == nil { pending = input } else { pending?.writeBuffer(&input) }
    }

    /// The next piece of what the chunks fed so far decode to, at most ``outputChunkBytes``; `nil` once they are
    /// used up. Throws once the body passes a limit or turns out corrupt.
    package func nextOutput() throws -> ByteBuffer? {
        guard var input = pending else { return nil }
        var output = ByteBufferAllocator().buffer(capacity: Self.outputChunkBytes)
        var isFull = false
        repeat {
            let before = (input: input.readableBytes, output: output.writerIndex)
            do {
                try decompressor.inflate(from: &input, to: &output)
                // Input left over means the stream ended (Z_STREAM_END); an ended stream fed the next chunk ends
                // again at once, so a member that ends on a chunk's last byte is found here too.
                if input.readableBytes > 0 { try startNextMember(input) }
            } catch let error as CourierError {
                throw error
            } catch let error as CompressNIOError where error == .bufferOverflow {
                isFull = true
            } catch let error as CompressNIOError where error == .inputBufferOverflow {
                // All input consumed; wait for the next chunk.
            } catch {
                throw CourierError(
                    code: .decompression,
                    message: "the \(encoding.rawValue) body is corrupt",
                    underlying: error
                )
            }
            try count(compressed: before.input - input.readableBytes, decompressed: output.writerIndex - before.output)
        } while !isFull && input.readableBytes > 0
        // zlib may hold more output for a full piece even when the input is used up: the next call drains it.
        pending = isFull ? input : nil
        return output.readableBytes > 0 ? output : nil
    }

    /// Decodes `input` and hands each piece of what it decodes to (at most ``outputChunkBytes``) to `body`.
    package func decompress(_ input: ByteBuffer, each body: (ByteBuffer) throws -> Void) throws {
        feed(input)
        while let piece = try nextOutput() { try body(piece) }
    }

    /// What follows the end of a compressed stream: RFC 1952 §2.2 makes a gzip file a series of members, so a
    /// gzip header (`1f 8b`; zlib checks the rest) starts the next one; anything else, and anything at all after a
    /// zlib stream, is trailing garbage, refused rather than dropped.
    private func startNextMember(_ rest: ByteBuffer) throws {
        guard encoding == .gzip, rest.getInteger(at: rest.readerIndex, as: UInt8.self) == 0x1f else {
            throw CourierError(
                code: .decompression,
                message: "the \(encoding.rawValue) body has bytes after the end of its compressed stream"
            )
        }
        do { try decompressor.reset() } catch {
            throw CourierError(
                code: .decompression,
                message: "the \(encoding.rawValue) decoder could not start the next member",
                underlying: error
            )
        }
    }

    /// Confirms the compressed stream ended; a body cut short is an error, not a silently short answer.
    package func finish() throws {
        guard !finished else { return }
        var empty = ByteBufferAllocator().buffer(capacity: 16)
        var output = ByteBufferAllocator().buffer(capacity: 64)
        do {
            try decompressor.inflate(from: &empty, to: &output)
        } catch {
            throw CourierError(
                code: .decompression,
                message: "the \(encoding.rawValue) body ended before its compressed stream did"
            )
        }
        if output.readableBytes > 0 {
            throw CourierError(
                code: .decompression,
                message: "the \(encoding.rawValue) body ended before its compressed stream did"
            )
        }
        finished = true
    }

    private func count(compressed: Int, decompressed: Int) throws {
        decompressedBytes += decompressed
        if decompressedBytes > limits.maxBodyBytes {
            throw CourierError(
                code: .bodyTooLarge,
                message: "the decompressed body exceeds the limit of \(limits.maxBodyBytes) bytes"
            )
        }
        window.compressed += compressed
        window.decompressed += decompressed
        guard window.decompressed > limits.ratioCheckFloor else { return }
        if window.decompressed / max(window.compressed, 1) > limits.maxDecompressionRatio {
            throw CourierError(
                code: .decompression,
                message:
                    "the body expands more than \(limits.maxDecompressionRatio)× when decompressed (a decompression bomb?)"
            )
        }
        window = (0, 0)
    }
}
