import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite("Request bodies compressed on the fly", .timeLimit(.minutes(1)))
struct PayloadCompressionTests {
    struct CodedEcho: Decodable {
        var headers: [String: [String]]
        var bodyLength: Int
        var decodedLength: Int?
        var decodedSHA256: String?
    }

    @Test(arguments: PayloadCompression.Encoding.allCases)
    func aLargeFileIsStreamedCompressedAndArrivesWhole(encoding: PayloadCompression.Encoding) async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("payload.json")
        let json = Data(ServerFiles.jsonDocument(items: 40_000).utf8)
        try json.write(to: file)
        try await withServerSession { session, _ in
            let request = try Request<CodedEcho>.post("/echo", body: .file(file, contentType: "application/json"))
                .compressingBody(PayloadCompression(encoding: encoding, level: 6))
            let echo = try await session.send(request).value
            #expect(echo.headers["content-encoding"] == [encoding.rawValue])
            #expect(echo.decodedLength == json.count && echo.decodedSHA256 == sha256Hex(json))
            #expect(echo.bodyLength * 4 < json.count)  // JSON shrinks well
        }
    }

    @Test func smallBodiesAndAlreadyEncodedOnesAreLeftAlone() async throws {
        let small = try Request<Data>.post("/echo", body: .text("tiny")).compressingBody(.gzip())
        #expect(small.headers[.contentEncoding] == nil)
        let forced = try Request<Data>.post("/echo", body: .text("tiny")).compressingBody(.gzip(minimumBytes: 0))
        #expect(forced.headers[.contentEncoding] == "gzip")
        let encoded = try Request<Data>.post("/echo", body: .text("x")).header("Content-Encoding", "br").compressingBody(.gzip(minimumBytes: 0))
        #expect(encoded.headers[.contentEncoding] == nil && encoded.rawHeaders.count == 1)
        let missing = #expect(throws: CourierError.self) {
            _ = try Request<Data>.post("/echo", body: .file(URL(filePath: "/nonexistent"))).compressingBody(.gzip())
        }
        #expect(missing?.code == .fileAccess)
    }
}
