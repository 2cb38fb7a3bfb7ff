import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import NIOCore
import Testing

@Suite("Multipart form bodies streamed from disk", .timeLimit(.minutes(1)))
struct MultipartTests {
    @Test func fieldsBytesAndFilesArriveWholeWithTheLengthKnownUpFront() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("report.pdf")
        let fileBytes = ServerFiles.data(count: 1_000_003)
        try fileBytes.write(to: file)
        var form = MultipartFormData()
        try form.append(field: "title", value: "Quarterly ✓")
        try form.append(data: Data("{\"a\":1}".utf8), name: "meta", fileName: "meta.json")
        try form.append(file: file, name: "document", headers: [("X-Part", "7")])
        try await withServerSession { session, _ in
            let response = try await session.send(
                Request<Data>.post("/multipart", body: try .multipart(form)).decoding(MultipartAnswer.self)
            )
            let parts = response.value.parts
            #expect(parts.map(\.name) == ["title", "meta", "document"])
            #expect(parts[0].sha256 == sha256Hex(Data("Quarterly ✓".utf8)) && parts[0].filename == nil)
            #expect(parts[1].filename == "meta.json" && parts[1].contentType == "application/json")
            #expect(parts[2].filename == "report.pdf" && parts[2].contentType == "application/pdf")
            #expect(parts[2].length == fileBytes.count && parts[2].sha256 == sha256Hex(fileBytes))

            let echo = try await session.send(Request<Echo>.post("/echo", body: try .multipart(form)))
            #expect(Int64(echo.value.bodyLength) == (try form.contentLength()))
            #expect(echo.value.header("Content-Type") == form.contentType)
        }
    }

    /// RBEFireworks' input-stream part: bytes from an `AsyncSequence`, with the form's length kept when the part's is
    /// given and chunked when it is not.
    @Test func aPartFromAnAsyncSequenceIsSentWithOrWithoutItsLength() async throws {
        let bytes = ServerFiles.data(count: 300_000)
        let chunks = stride(from: 0, to: bytes.count, by: 65_536).map {
            ByteBuffer(bytes: bytes[$0..<min($0 + 65_536, bytes.count)])
        }
        try await withServerSession { session, _ in
            for length in [Int64(bytes.count), nil] {
                var form = MultipartFormData()
                try form.append(field: "kind", value: "rows")
                try form.append(stream: ByteStream(chunks: chunks), name: "rows", fileName: "rows.csv", length: length)
                #expect(try form.contentLength() == nil || length != nil)
                let parts = try await session.send(
                    Request<Data>.post("/multipart", body: try .multipart(form)).decoding(MultipartAnswer.self)
                )
                .value.parts
                #expect(parts.map(\.name) == ["kind", "rows"])
                #expect(parts[1].filename == "rows.csv" && parts[1].contentType == "text/csv")
                #expect(parts[1].length == bytes.count && parts[1].sha256 == sha256Hex(bytes))
            }
        }
    }

    @Test func aPartCanBePrecompressedWithGzip() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("log.json")
        let json = Data(ServerFiles.jsonDocument(items: 5_000).utf8)
        try json.write(to: file)
        var form = MultipartFormData()
        try form.append(field: "kind", value: "log")
        try form.append(file: file, name: "log", gzipLevel: 6)
        #expect(try form.contentLength() == nil)
        try await withServerSession { session, _ in
            let parts = try await session.send(
                Request<Data>.post("/multipart", body: try .multipart(form)).decoding(MultipartAnswer.self)
            ).value.parts
            #expect(parts.map(\.name) == ["kind", "log"])
            #expect(parts[1].filename == "log.json.gz" && parts[1].contentType == "application/gzip")
            #expect(parts[1].decodedLength == json.count && parts[1].decodedSHA256 == sha256Hex(json))
            #expect(parts[1].length * 4 < json.count)
        }
    }

    @Test func anEncodableValueIsSentAsNamedFields() async throws {
        struct Profile: Encodable, Sendable {
            var name: String
            var age: Int
            var tags: [String]
        }
        try await withServerSession { session, _ in
            let body = RequestBody.multipartForm(Profile(name: "Ada \"L\"", age: 36, tags: ["math", "code"]))
            let parts = try await session.send(
                Request<Data>.post("/multipart", body: body).decoding(MultipartAnswer.self)
            ).value.parts
            #expect(parts.map(\.name) == ["name", "age", "tags[0]", "tags[1]"])
            #expect(
                parts[0].sha256 == sha256Hex(Data("Ada \"L\"".utf8)) && parts[1].sha256 == sha256Hex(Data("36".utf8))
            )
        }
    }

    @Test func hostileNamesCannotBreakTheFraming() async throws {
        var form = MultipartFormData()
        let quoted = "a\"; filename=\"x.sh"
        try form.append(field: quoted, value: "v")
        try form.append(data: Data("x".utf8), name: "f", fileName: "../\"evil\".txt")
        let withLines = #expect(throws: CourierError.self) {
            try form.append(field: "a\r\nContent-Type: text/evil\r\n\r\nboom", value: "v")
        }
        #expect(withLines?.code == .invalidHeader && withLines?.message.contains("field name containing CR") == true)
        let fileWithLines = #expect(throws: CourierError.self) {
            try form.append(data: Data(), name: "f", fileName: "evil\n.txt")
        }
        #expect(
            fileWithLines?.code == .invalidHeader && fileWithLines?.message.contains("file name containing LF") == true
        )
        #expect(form.parts.count == 2)
        try await withServerSession { session, _ in
            let parts = try await session.send(
                Request<Data>.post("/multipart", body: try .multipart(form)).decoding(MultipartAnswer.self)
            ).value.parts
            #expect(parts.count == 2)
            #expect(parts[0].name == "a%22; filename=%22x.sh" && parts[0].filename == nil)
            #expect(parts[1].filename == "../%22evil%22.txt")
        }
    }

    @Test func badPartsAreRefusedBeforeAnythingIsSent() throws {
        var form = MultipartFormData()
        let header = #expect(throws: CourierError.self) {
            try form.append(data: Data(), name: "x", headers: [("X-Bad", "a\r\nb")])
        }
        #expect(header?.code == .invalidHeader)
        let missing = #expect(throws: CourierError.self) {
            try form.append(file: URL(filePath: "/nonexistent/file"), name: "f")
        }
        #expect(missing?.code == .unreadableBody)
        let type = #expect(throws: CourierError.self) {
            try form.append(data: Data(), name: "x", contentType: "text/plain\r\nX: y")
        }
        #expect(type?.code == .invalidHeader)
        // A part header named like the boundary delimiter would start a line a parser takes for the part's end.
        var bounded = MultipartFormData(boundary: "b0und")
        let boundaryHeader = #expect(throws: CourierError.self) {
            try bounded.append(data: Data(), name: "x", headers: [("--b0und", "")])
        }
        #expect(boundaryHeader?.code == .invalidHeader && boundaryHeader?.message.contains("boundary") == true)
        #expect(bounded.parts.isEmpty)
        try bounded.append(data: Data(), name: "x", headers: [("--b0un", "near miss")])  // not the delimiter: accepted
        #expect(bounded.parts.count == 1)
    }
}
