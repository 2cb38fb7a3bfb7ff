import Courier
import CourierTesting
import Foundation

extension Scenario {
    /// `upload-resumable-1g`: a 1 GiB file (64 MiB with `--quick`) to CourierTesting's `ResumableUploadServer`
    /// (the IETF draft served by its own handler, which hashes what it receives), with the connection cut when half
    /// of it is in. Courier's resumable upload goes on from the server's offset; `curl -T` (a plain PUT to the same
    /// server, without `Expect: 100-continue`) fails at the cut and is run again from the first byte, as a script
    /// would. Both times, and the bytes the server took in beyond the file (sent twice).
    static let uploadResumable1G = Scenario(name: "upload-resumable-1g") { _, plan in
        let size = plan.isQuick ? 64 << 20 : 1 << 30
        let directory = try Transfers.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("upload.bin")
        try Transfers.writeFile(file, bytes: size)
        let server = try await ResumableUploadServer.start()
        let session = Session()
        let twice = Locked<[String: Int64]>([:])
        /// Runs one upload with a cut at half, and keeps the bytes the server took in beyond the file.
        func cutAtHalf(_ name: String, _ upload: @escaping @Sendable (URL) async throws -> Void) -> FixedWork {
            FixedWork(name: name) {
                let before = server.bytesReceived
                let path = "/bench/\(name)-\(UUID().uuidString)"
                server.dropConnections(atBytes: [Int64(size / 2)])
                try await upload(server.url(path))
                guard server.received(path)?.length == Int64(size) else {
                    throw BenchError.unexpected("\(name): the server does not have the whole file")
                }
                twice.withLock {
                    $0[name, default: 0] = max($0[name] ?? 0, server.bytesReceived - before - Int64(size))
                }
            }
        }
        var contenders = [
            cutAtHalf("courier") { url in
                let upload = session.resumableUpload(
                    file,
                    to: url,
                    options: ResumableUploadOptions(retryDelay: .milliseconds(10), keepsRecord: false)
                )
                _ = try await upload.result()
            }
        ]
        var notes = ""
        if let curl = Tools.find("curl", noting: &notes) {
            contenders.append(
                cutAtHalf("curl") { url in
                    // The cut fails the first run (quietly); a script runs it again, from the first byte. No
                    // `Expect: 100-continue`, which would wait a second for an answer this server does not send.
                    let put = ["-o", "/dev/null", "-H", "Expect:", "-T", file.path, url.absoluteString]
                    do { try await Tools.run(curl, ["-sf"] + put) } catch {
                        try await Tools.run(curl, ["-sSf"] + put)
                    }
                }
            )
        }
        let rounds = plan.isQuick ? 1 : 3
        let times = try await FixedWork.compare(contenders, rounds: rounds) { _, run in try await run() }
        try await session.shutdown()
        await server.shutdown()
        let seconds = times.mapValues { Throughput.median($0).seconds }
        let sentTwice = twice.withLock { $0 }
        let versus =
            seconds["curl"].map { curl in
                String(format: "curl/courier time = %.2f; ", curl / max(seconds["courier"] ?? 1, 1e-9))
            } ?? ""
        return ScenarioResult(
            name: "upload-resumable-1g",
            unit: "s",
            higherIsBetter: false,
            results: seconds,
            metrics: ["sent_twice_mib": sentTwice.mapValues { Double($0) / Double(1 << 20) }],
            notes: notes + versus
                + "\(ByteCount.format(size)) file (page-cached), the connection cut at half, median of \(rounds) runs each; "
                + "sent twice (the most in a run): "
                + sentTwice.sorted { $0.key < $1.key }.map { "\($0.key) \(ByteCount.format($0.value))" }.joined(
                    separator: ", "
                )
        )
    }
}
