import CompressNIO
import Foundation
package import NIOCore

/// Decodes a gzip or deflate body chunk by chunk, refusing it as soon as it passes the size or ratio limit,
/// so a decompression bomb costs at most one chunk's worth of work past the limit. The test server uses it
/// too, to check what a client compressed.
package final class BodyDecompressor {
    enum Encoding: String {
        case gzip, deflate
    }

    private let decompressor: ZlibDecompressor
    private let limits: ResponseLimits
    private let encoding: Encoding
    private var compressedBytes = 0
    private var decompressedBytes = 0
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
        let codings = contentEncoding.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
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

    /// Decompresses one chunk of the body; the result may be empty.
    package func decompress(_ input: ByteBuffer) throws -> ByteBuffer {
        var input = input
        compressedBytes += input.readableBytes
        var output = ByteBufferAllocator().buffer(capacity: max(input.readableBytes * 4, 16 * 1024))
        var needsMoreOutput = false
        repeat {
            needsMoreOutput = false
            let before = output.writerIndex
            do {
                try decompressor.inflate(from: &input, to: &output)
                // Input left over means the stream ended (Z_STREAM_END); an ended stream fed the next chunk ends
                // again at once, so a member that ends on a chunk's last byte is found here too.
                if input.readableBytes > 0 { try startNextMember(input) }
            } catch let error as CourierError {
                throw error
            } catch let error as CompressNIOError where error == .bufferOverflow {
                needsMoreOutput = true
            } catch let error as CompressNIOError where error == .inputBufferOverflow {
                // All input consumed; wait for the next chunk.
            } catch {
                throw CourierError(
                    code: .decompression,
                    message: "the \(encoding.rawValue) body is corrupt",
                    underlying: error
                )
            }
            decompressedBytes += output.writerIndex - before
            try checkLimits()
            if needsMoreOutput { output.reserveCapacity(minimumWritableBytes: min(output.capacity, 1 << 20)) }
        } while !finished && (input.readableBytes > 0 || needsMoreOutput)
        return output
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

    private func checkLimits() throws {
        if decompressedBytes > limits.maxBodyBytes {
            throw CourierError(
                code: .bodyTooLarge,
                message: "the decompressed body exceeds the limit of \(limits.maxBodyBytes) bytes"
            )
        }
        if decompressedBytes > limits.ratioCheckFloor && compressedBytes > 0
            && decompressedBytes / compressedBytes > limits.maxDecompressionRatio
        {
            throw CourierError(
                code: .decompression,
                message:
                    "the body expands more than \(limits.maxDecompressionRatio)× when decompressed (a decompression bomb?)"
            )
        }
    }
}
