import CompressNIO
import Foundation
import NIOCore
import Testing

@testable import Courier

@Suite("Streaming decompression")
struct DecompressorTests {
    func compressed(_ text: String, _ algorithm: CompressionAlgorithm) throws -> ByteBuffer {
        var buffer = ByteBuffer(string: text)
        return try buffer.compress(with: algorithm)
    }

    func inflate(
        _ input: ByteBuffer,
        encoding: String,
        chunk: Int,
        limits: ResponseLimits = ResponseLimits()
    ) throws -> String {
        guard let decompressor = try BodyDecompressor(contentEncoding: encoding, limits: limits) else { return "" }
        var output = ByteBuffer()
        var rest = input
        while rest.readableBytes > 0 {
            let piece = rest.readSlice(length: min(chunk, rest.readableBytes)) ?? ByteBuffer()
            try decompressor.decompress(piece) { out in
                #expect(out.readableBytes <= BodyDecompressor.outputChunkBytes)
                var out = out
                output.writeBuffer(&out)
            }
        }
        try decompressor.finish()
        return String(buffer: output)
    }

    @Test(arguments: [1, 7, 1024, 1 << 20])
    func gzipAndDeflateDecodeInAnyChunking(chunk: Int) throws {
        let text = String(repeating: "courier streams bodies ", count: 5000)
        #expect(try inflate(try compressed(text, .gzip()), encoding: "gzip", chunk: chunk) == text)
        #expect(try inflate(try compressed(text, .zlib()), encoding: "deflate", chunk: chunk) == text)
    }

    @Test(arguments: [1, 5, 19, 1 << 20])
    func everyGzipMemberIsDecodedInAnyChunking(chunk: Int) throws {
        // RFC 1952 §2.2: a gzip body may be several members; each is part of the body.
        var body = try compressed("first member, ", .gzip())
        var second = try compressed("second member, ", .gzip())
        var third = try compressed("third", .gzip())
        body.writeBuffer(&second)
        body.writeBuffer(&third)
        #expect(try inflate(body, encoding: "gzip", chunk: chunk) == "first member, second member, third")
    }

    @Test(arguments: [1, 3, 1 << 20])
    func bytesAfterTheCompressedStreamAreRefusedNotDropped(chunk: Int) throws {
        for (encoding, algorithm) in [("gzip", CompressionAlgorithm.gzip()), ("deflate", .zlib())] {
            var body = try compressed("the body", algorithm)
            body.writeString("garbage")
            #expect(throws: CourierError.self, "\(encoding)") {
                _ = try inflate(body, encoding: encoding, chunk: chunk)
            }
        }
        // A second member whose header is broken is corrupt, not a silently short body.
        var member = try compressed("one", .gzip())
        member.writeBytes([0x1f, 0x00, 0x08, 0x00])
        #expect(throws: CourierError.self) { _ = try inflate(member, encoding: "gzip", chunk: 1 << 20) }
        // A second member cut short is a body cut short.
        var cut = try compressed("one", .gzip())
        let next = try compressed("two", .gzip())
        cut.writeBytes(Array(next.readableBytesView.prefix(8)))
        #expect(throws: CourierError.self) { _ = try inflate(cut, encoding: "gzip", chunk: 1 << 20) }
    }

    @Test func identityAndUnknownEncodingsAreLeftAlone() throws {
        #expect(try BodyDecompressor(contentEncoding: nil, limits: ResponseLimits()) == nil)
        #expect(try BodyDecompressor(contentEncoding: "identity", limits: ResponseLimits()) == nil)
        #expect(try BodyDecompressor(contentEncoding: "br", limits: ResponseLimits()) == nil)
    }

    @Test func truncatedAndCorruptStreamsFail() throws {
        let full = try compressed(String(repeating: "abc", count: 10000), .gzip())
        let half = full.getSlice(at: 0, length: full.readableBytes / 2) ?? full
        let truncated = #expect(throws: CourierError.self) { try inflate(half, encoding: "gzip", chunk: 100) }
        #expect(truncated?.code == .decompression)
        let corrupt = #expect(throws: CourierError.self) {
            try inflate(ByteBuffer(string: "definitely not gzip"), encoding: "gzip", chunk: 100)
        }
        #expect(corrupt?.code == .decompression)
    }

    @Test func aBombIsRefusedWhileStreaming() throws {
        var zeros = ByteBuffer(repeating: 0, count: 32 << 20)
        let bomb = try zeros.compress(with: .gzip())
        let ratio = #expect(throws: CourierError.self) { try inflate(bomb, encoding: "gzip", chunk: 16 * 1024) }
        #expect(ratio?.code == .decompression)
        let size = #expect(throws: CourierError.self) {
            try inflate(
                bomb,
                encoding: "gzip",
                chunk: 16 * 1024,
                limits: ResponseLimits(maxBodyBytes: 1 << 20, maxDecompressionRatio: 10_000)
            )
        }
        #expect(size?.code == .bodyTooLarge)
    }
}
