import AsyncHTTPClient
import Courier
import Foundation
import NIOPosix

extension Scenario {
    /// `download-1g`: 1 GiB (64 MiB with `--quick`) to a file on the same filesystem; Courier's download
    /// manager against AsyncHTTPClient's `FileDownloadDelegate`, curl, and curl followed by an `fsync` of its file
    /// (`curl+fsync`: the time until the file is durable, as Courier's is when it reports the download done), and
    /// the disk's own ceiling, `dd` of as many bytes with `conv=fsync` (`dd-fsync`). Also Courier's peak RSS.
    static let download1G = Scenario(name: "download-1g") { target, plan in
        let size = plan.isQuick ? 64 << 20 : 1 << 30
        let url = target.base.appending(path: "blob/\(size)")
        let directory = try Transfers.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let session = Session()
        let manager = try DownloadManager(session: session)
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: .likeCourier())
        let peakRSS = PeakRSS()
        var contenders = [
            TransferContender(name: "courier") { file in
                peakRSS.reset()
                let download = try await manager.add(url, to: .file(file))
                _ = try await download.completion()
                peakRSS.sample()
            },
            TransferContender(name: "ahc") { file in
                let delegate = try FileDownloadDelegate(path: file.path)
                _ = try await client.execute(
                    request: try HTTPClient.Request(url: url.absoluteString),
                    delegate: delegate
                ).get()
            },
        ]
        var notes = ""
        if let curl = Tools.find("curl", noting: &notes) {
            contenders.append(
                TransferContender(name: "curl") { file in
                    try await Tools.run(curl, ["-sSf", "-o", file.path, url.absoluteString])
                }
            )
            contenders.append(
                TransferContender(name: "curl+fsync") { file in
                    try await Tools.run(curl, ["-sSf", "-o", file.path, url.absoluteString])
                    try Tools.fsync(file)
                }
            )
        }
        if let dd = Tools.find("dd", noting: &notes) {
            contenders.append(
                TransferContender(name: "dd-fsync") { file in
                    try await Tools.run(
                        dd,
                        [
                            "if=/dev/zero", "of=\(file.path)", "bs=1M", "count=\(size >> 20)", "conv=fsync",
                            "status=none",
                        ]
                    )
                }
            )
        }
        let rounds = plan.isQuick ? 1 : 5
        let results = try await Transfers.compare(contenders, bytes: size, rounds: rounds, in: directory)
        try await client.shutdown()
        try await session.shutdown()
        var versus = String(format: "courier/ahc = %.2f", results.ratio("courier", to: "ahc"))
        if results["curl"] != nil {
            versus += String(
                format: ", courier/curl = %.2f, courier/curl+fsync = %.2f (target >= 1.2)",
                results.ratio("courier", to: "curl"),
                results.ratio("courier", to: "curl+fsync")
            )
        }
        if results["dd-fsync"] != nil {
            versus += String(
                format: ", courier/dd-fsync = %.2f (target >= 0.9 of the disk's durable write speed)",
                results.ratio("courier", to: "dd-fsync")
            )
        }
        return ScenarioResult(
            name: "download-1g",
            unit: "MB/s",
            higherIsBetter: true,
            results: results,
            metrics: ["peak_rss_mib": ["courier": peakRSS.peakMiB]],
            notes: notes + versus + "; " + peakRSS.note
                + "; \(ByteCount.format(size)) per run, median of \(rounds) runs each, one connection, no checksum; the disk is synced between runs"
        )
    }

    /// `download-segmented`: a server that paces every connection; Courier with four connections, with one,
    /// and `aria2c -x4`.
    static let downloadSegmented = Scenario(name: "download-segmented") { target, plan in
        let size = plan.isQuick ? 8 << 20 : 64 << 20
        let perConnection = 16_000_000
        let url = target.base.appending(path: "blob/\(size)").appending(queryItems: [
            URLQueryItem(name: "rate", value: String(perConnection))
        ])
        let directory = try Transfers.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let session = Session()
        let manager = try DownloadManager(session: session)
        func courier(_ connections: Int) -> TransferContender {
            TransferContender(name: "courier-\(connections)") { file in
                let download = try await manager.add(
                    url,
                    to: .file(file),
                    options: DownloadOptions(connections: connections)
                )
                _ = try await download.completion()
            }
        }
        var contenders = [courier(4), courier(1)]
        var notes = ""
        if let aria2c = Tools.find("aria2c", noting: &notes) {
            contenders.append(
                TransferContender(name: "aria2c-4") { file in
                    try await Tools.run(
                        aria2c,
                        [
                            "-x4", "-s4", "-k1M", "-q", "--allow-overwrite=true", "--auto-file-renaming=false",
                            "--file-allocation=none", "-d", file.deletingLastPathComponent().path, "-o",
                            file.lastPathComponent,
                            url.absoluteString,
                        ]
                    )
                }
            )
        }
        let results = try await Transfers.compare(contenders, bytes: size, rounds: plan.isQuick ? 1 : 3, in: directory)
        try await session.shutdown()
        let ratio = results.ratio("courier-4", to: "courier-1")
        return ScenarioResult(
            name: "download-segmented",
            unit: "MB/s",
            higherIsBetter: true,
            results: results,
            notes: notes + String(format: "courier-4/courier-1 = %.2f (target >= 3)", ratio)
                + "; the server paces each connection with a timer (nominally \(ByteCount.format(perConnection))/s); \(ByteCount.format(size)) per run"
        )
    }
}
