import Courier
import CourierTesting
import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DemoTour {
    /// The upload part of the tour: a multipart form compressed on the fly (the server parses it and checks
    /// every part's SHA-256), the adaptive strategy leaving a JPEG alone, a batch of file uploads that names
    /// the one that failed, and a resumable upload cut twice.
    mutating func uploadSteps() async throws {
        let server = self.server
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-demo-uploads-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = Data(ServerFiles.jsonDocument(items: 20_000).utf8)
        let report = directory.appendingPathComponent("report.json")
        try json.write(to: report)
        try await withSession(Configuration { $0.baseURL = server.baseURL }) { session in
            await check(
                "A multipart form is gzip-compressed while it streams; the server parses it and checks each part"
            ) {
                var form = MultipartFormData()
                try form.append(field: "title", value: "Quarterly report")
                try form.append(file: report, name: "report")
                let (request, decision) = try await Request<Data>.post("/multipart", body: try form.body())
                    .compressingBodyWithDecision(.adaptive())
                let upload = try session.upload(request)
                let answer = try JSONDecoder().decode(MultipartAnswer.self, from: try await upload.response.value)
                let whole = answer.parts.last?.sha256 == Hex.string(SHA256.hash(data: json))
                let saved = answer.decodedBytes - answer.receivedBytes
                return (
                    whole && saved > 0,
                    "\(decision); \(ByteCount.format(answer.decodedBytes)) form sent as \(ByteCount.format(answer.receivedBytes)) "
                        + "(\(ByteCount.format(saved)) saved), parts \(answer.parts.compactMap(\.name)) arrived whole"
                )
            }
            await check("The adaptive strategy leaves already-compressed content alone") {
                let photo = try await Request<Data>.post("/echo", body: .bytes(json, contentType: "image/jpeg"))
                    .compressingBodyWithDecision(.adaptive())
                return (
                    photo.decision.setting == nil,
                    "a \(ByteCount.format(json.count)) image/jpeg body: \(photo.decision)"
                )
            }
            await check("A batch upload names the files that failed") {
                let files = [report, directory.appendingPathComponent("missing.json"), report]
                let outcome = try await session.uploadFiles(
                    files,
                    to: "/multipart",
                    field: "file",
                    options: BatchOptions(concurrency: 2)
                )
                return (
                    outcome.failedFiles == [files[1]],
                    "3 files, 2 uploaded; failed: \(outcome.failedFiles.map(\.lastPathComponent))"
                )
            }
            await check("A resumable upload cut twice goes on from the server's offset, no byte sent twice") {
                let uploads = try await ResumableUploadServer.start()
                defer { Task { await uploads.shutdown() } }
                let size = 4 << 20
                let file = directory.appendingPathComponent("backup.tar")
                try Data(ServerFiles.bytes(offset: 0, count: size)).write(to: file)
                uploads.dropConnections(atBytes: [Int64(size / 3), Int64(size * 2 / 3)])
                let upload = session.resumableUpload(
                    file,
                    to: uploads.url("/backups/backup.tar"),
                    options: ResumableUploadOptions(retryDelay: .milliseconds(20))
                )
                let turns = Task {
                    var resumed: [Int64] = []
                    for await event in upload.events { if case .resumed(let offset) = event { resumed.append(offset) } }
                    return resumed
                }
                _ = try await upload.result()
                let resumed = await turns.value
                let whole = uploads.received("/backups/backup.tar")?.sha256 == ServerFiles.sha256(count: size)
                return (
                    whole && resumed.count == 2 && uploads.bytesReceived == Int64(size),
                    "\(ByteCount.format(size)) through the loopback upload server, cut at a third and two "
                        + "thirds, resumed at bytes \(resumed.map(String.init).joined(separator: " and ")); the server "
                        + "took in \(ByteCount.format(uploads.bytesReceived)) and has the file whole"
                )
            }
        }
    }
}

/// What the test server's `/multipart` answers.
private struct MultipartAnswer: Decodable {
    struct Part: Decodable {
        var name: String?
        var sha256: String
    }
    var parts: [Part]
    var receivedBytes: Int
    var decodedBytes: Int
}
