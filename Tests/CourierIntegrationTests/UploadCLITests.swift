import CourierTestSupport
import CourierTesting
import Foundation
import Testing

@Suite("courier upload", .timeLimit(.minutes(5)))
struct UploadCLITests {
    @Test func aCompressedFormArrivesWholeAndSmaller() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("items.json")
        let json = Data(ServerFiles.jsonDocument(items: 10_000).utf8)
        try json.write(to: file)
        try await withTestServer { server in
            let outcome = try await CLI.run([
                "upload", server.url("/multipart").absoluteString, "--file", "doc=@\(file.path)",
                "--field", "album=trip", "--compress", "gzip",
            ])
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let parts = try JSONDecoder().decode(MultipartAnswer.self, from: Data(outcome.stdout.utf8))
            #expect(parts.parts.map(\.name) == ["album", "doc"])
            #expect(parts.parts[1].filename == "items.json" && parts.parts[1].sha256 == sha256Hex(json))
            #expect(parts.receivedBytes * 4 < parts.decodedBytes)
            #expect(outcome.stderr.contains("gzip: compressed with level 6") && outcome.stderr.contains("HTTP 200"))

            let put = try await CLI.run([
                "upload", server.url("/echo").absoluteString, "--data", "@\(file.path)", "--method", "PUT",
            ])
            #expect(put.status == 0 && put.stdout.contains(sha256Hex(json)) && put.stdout.contains("\"PUT\""))
        }
    }

    @Test func badInputGetsOneClearLine() async throws {
        let cases: [([String], String)] = [
            (["upload", "http://127.0.0.1:1/x"], "upload: nothing to upload"),
            (["upload", "http://127.0.0.1:1/x", "--file", "a=/tmp/x"], "--file: --file takes name=@PATH"),
            (
                ["upload", "http://127.0.0.1:1/x", "--file", "a=@/nonexistent/x"],
                "cannot read \"/nonexistent/x\": no such file"
            ),
            (["upload", "http://127.0.0.1:1/x", "--data", "@/tmp", "--field", "a=b"], "--data: --data sends one body"),
            (
                ["upload", "http://127.0.0.1:1/x", "--data", "hi", "--compress", "zip"],
                "--compress: \"zip\" is not a compression"
            ),
            (
                ["upload", "http://127.0.0.1:1/x", "--data", "hi", "--compress", "gzip:12"],
                "--compress: the compression level must be 1 to 9"
            ),
            (["upload", "http://127.0.0.1:1/x", "--data", "hi", "--method", "GET"], "--method must be POST or PUT"),
            (["upload", "ftp://example.com/x", "--data", "hi"], "URL: not a valid http(s) URL"),
        ]
        for (arguments, message) in cases {
            let outcome = try await CLI.run(arguments)
            #expect(outcome.status != 0 && outcome.stderr.contains(message), "\(arguments): \(outcome.stderr)")
            #expect(outcome.stdout.isEmpty && !outcome.stderr.contains("Fatal error"))
        }
    }

    @Test func anUnreachableTargetSizeFailsBeforeSending() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("noise.bin")
        var generator = SystemRandomNumberGenerator()
        try Data((0..<200_000).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: file)
        try await withTestServer { server in
            let outcome = try await CLI.run([
                "upload", server.url("/echo").absoluteString, "--data", "@\(file.path)", "--compress", "target:50K",
            ])
            #expect(
                outcome.status == 1
                    && outcome.stderr.contains("compressionTarget: no zlib setting brings the body under")
            )
            #expect(server.hits("/echo") == 0)
        }
    }

    /// `--read-timeout` is how long the client waits for the answer once the body is sent: a server that
    /// takes longer to answer ends the upload with a read-idle timeout, a longer setting lets it answer.
    @Test func readTimeoutBoundsTheWaitForTheAnswer() async throws {
        try await withTestServer { server in
            let impatient = try await CLI.run([
                "upload", server.url("/delay/2000").absoluteString, "--data", "hello", "--read-timeout", "0.3",
            ])
            #expect(
                impatient.status == 28 && impatient.stderr.contains("timeout: readIdle timeout of 300 ms elapsed"),
                "\(impatient.stderr)"
            )
            let patient = try await CLI.run([
                "upload", server.url("/delay/300").absoluteString, "--data", "hello", "--read-timeout", "5",
            ])
            #expect(patient.status == 0, "\(patient.stderr)")
        }
    }

    /// A 1 GiB file part goes out in flat memory: the process's peak RSS is within 16 MiB of its peak for a
    /// 1 MiB part (a sparse file, so the disk is not the bottleneck; the client still reads and sends every byte).
    /// Measured against the small upload rather than a fixed figure, because most of a debug CLI's RSS is its code
    /// (about 45 MiB of file-backed pages for an upload), which says nothing about how the body is sent.
    @Test func aOneGibibytePartStreamsInBoundedMemory() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func sparseFile(_ name: String, size: Int) throws -> URL {
            let file = directory.appendingPathComponent(name)
            #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
            let handle = try FileHandle(forWritingTo: file)
            try handle.truncate(atOffset: UInt64(size))
            try handle.close()
            return file
        }
        let size = 1 << 30
        let small = try sparseFile("small.bin", size: 1 << 20)
        let big = try sparseFile("big.bin", size: size)
        try await withTestServer { server in
            func upload(_ file: URL) async throws -> (parts: MultipartAnswer, peakKiB: Int) {
                let outcome = try await CLI.run(
                    ["upload", server.url("/multipart").absoluteString, "--file", "disk=@\(file.path)"],
                    measuringPeakRSS: true
                )
                #expect(outcome.status == 0, "\(outcome.stderr)")
                let parts = try JSONDecoder().decode(MultipartAnswer.self, from: Data(outcome.stdout.utf8))
                return (parts, try #require(outcome.peakRSSKiB))
            }
            let baseline = try await upload(small).peakKiB
            let (parts, peak) = try await upload(big)
            #expect(parts.parts.first?.length == size)
            // SHA-256 of 1 GiB of zeros
            #expect(parts.parts.first?.sha256 == "49bc20df15e412a64472421e13fe86ff1c5165e18b2afccf160d4dc19fe68a14")
            #expect(peak - baseline < 16 * 1024, "peak RSS \(peak) KiB for 1 GiB, \(baseline) KiB for 1 MiB")
        }
    }
}
