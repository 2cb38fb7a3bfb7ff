import Courier
import Crypto
import Foundation
import NIOCore
import Testing

@testable import CourierTesting

@Suite("The test server's multipart digest: content passed over quickly, delimiters still found")
struct MultipartDigestTests {
    /// Content full of near-delimiters (CR, CR LF, CR LF --, CR LF -- and part of the boundary), fed in chunks of
    /// every size from 1 byte, so a delimiter falls across every kind of chunk edge.
    @Test func partsAreFoundWholeWhateverTheChunking() throws {
        let boundary = "XyZ-boundary"
        let tricky = Data("a\r\rb\r\nc\r\n-d\r\n--e\r\n--XyZ-f\r\n--XyZ-boundar".utf8)
        var content = Data()
        for index in 0..<200 {
            content.append(tricky)
            content.append(UInt8(index % 100))  // never "y", which would finish the boundary
        }
        var body = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n".utf8)
        body.append(content)
        body.append(
            Data(
                "\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nsecond\r\n--\(boundary)--\r\n"
                    .utf8
            )
        )
        for size in [1, 2, 3, 7, 13, 17, 64, 1000, body.count] {
            let digest = try #require(
                MultipartDigest(contentType: "multipart/form-data; boundary=\(boundary)", contentEncoding: nil)
            )
            var offset = 0
            while offset < body.count {
                let end = min(offset + size, body.count)
                digest.update(ByteBuffer(bytes: body[offset..<end]))
                offset = end
            }
            let summary = digest.summary()
            let expected = SHA256.hash(data: content).map { String(format: "%02x", $0) }.joined()
            #expect(
                summary.contains("\"length\":\(content.count)") && summary.contains(expected),
                "chunks of \(size): \(summary)"
            )
            #expect(
                summary.contains("\"name\":\"b\"") && summary.contains("\"length\":6"),
                "chunks of \(size): \(summary)"
            )
        }
    }
}
