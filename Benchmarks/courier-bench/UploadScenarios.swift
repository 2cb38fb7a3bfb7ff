import Courier
import Foundation

extension Scenario {
    /// `upload-multipart-1g`: a 1 GiB file (64 MiB with `--quick`) as one multipart file part to the bench
    /// server, which reads and drops it; Courier's streamed form against `curl -F`. Also Courier's peak RSS.
    static let uploadMultipart1G = Scenario(name: "upload-multipart-1g") { target, plan in
        let size = plan.isQuick ? 64 << 20 : 1 << 30
        let url = target.base.appending(path: "upload")
        let directory = try Transfers.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("part.bin")
        try Transfers.writeFile(file, bytes: size)
        let session = Session()  // the default validators turn a non-2xx answer into an error
        let peakRSS = PeakRSS()
        var contenders = [
            FixedWork(name: "courier") {
                var form = MultipartFormData()
                try form.append(file: file, name: "file")
                _ = try await session.upload(Request<Data>.post(url.absoluteString, body: try form.body())).response
            }
        ]
        var notes = ""
        if let curl = Tools.find("curl", noting: &notes) {
            contenders.append(
                FixedWork(name: "curl") {
                    try await Tools.run(
                        curl,
                        ["-sSf", "-o", "/dev/null", "-H", "Expect:", "-F", "file=@\(file.path)", url.absoluteString]
                    )
                }
            )
        }
        let rounds = plan.isQuick ? 1 : 3
        let times = try await FixedWork.compare(contenders, rounds: rounds) { name, run in
            if name == "courier" { peakRSS.reset() }
            try await run()
            if name == "courier" { peakRSS.sample() }
        }
        try await session.shutdown()
        let results = times.mapValues { Double(size) / 1e6 / Throughput.median($0).seconds }
        let versus =
            results["curl"].map { _ in
                String(format: "courier/curl = %.2f (target >= 0.9)", results.ratio("courier", to: "curl"))
            } ?? ""
        return ScenarioResult(
            name: "upload-multipart-1g",
            unit: "MB/s",
            higherIsBetter: true,
            results: results,
            metrics: ["peak_rss_mib": ["courier": peakRSS.peakMiB]],
            notes: notes + versus + "; " + peakRSS.note
                + "; \(ByteCount.format(size)) file part per run (page-cached), median of \(rounds) runs each; the server reads and drops the body; curl runs with -H \"Expect:\" (no 100-continue wait, which this server does not answer)"
        )
    }

    /// `upload-gzip`: 100 MB of JSON (10 MB with `--quick`) uploaded with `Content-Encoding: gzip` at levels 1
    /// and 6, compressed on the fly by Courier (`courier`), against zlib's one-shot `compress2` on the same
    /// bytes in memory (`zlib`, no network at all); MB/s of input.
    static let uploadGzip = Scenario(name: "upload-gzip") { target, plan in
        let json = Data(JSONSample.document(bytes: plan.isQuick ? 10_000_000 : 100_000_000).utf8)
        let url = target.base.appending(path: "upload")
        let session = Session()  // the default validators turn a non-2xx answer into an error
        var results: [String: Double] = [:]
        for level in [1, 6] {
            let contenders = [
                FixedWork(name: "courier-l\(level)") {
                    let request = try await Request<Data>.post(
                        url.absoluteString,
                        body: .bytes(json, contentType: "application/json")
                    )
                    .compressingBody(.gzip(level: level))
                    _ = try await session.upload(request).response
                },
                FixedWork(name: "zlib-l\(level)") { _ = try ZlibDirect.compress(json, level: level) },
            ]
            let times = try await FixedWork.compare(contenders, rounds: plan.isQuick ? 1 : 3) { _, run in
                try await run()
            }
            for (name, time) in times.mapValues(Throughput.median) {
                results[name] = Double(json.count) / 1e6 / time.seconds
            }
        }
        try await session.shutdown()
        func ratio(_ level: Int) -> Double { results.ratio("courier-l\(level)", to: "zlib-l\(level)") }
        return ScenarioResult(
            name: "upload-gzip",
            unit: "MB/s",
            higherIsBetter: true,
            results: results,
            notes: String(
                format: "%.0f MB of JSON; courier/zlib = %.2f at level 1, %.2f at level 6 (target >= 0.9); ",
                Double(json.count) / 1e6,
                ratio(1),
                ratio(6)
            )
                + "courier compresses while it sends to the loopback server, zlib only compresses in memory"
        )
    }
}
