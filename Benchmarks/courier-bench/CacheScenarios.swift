import AsyncHTTPClient
import CZlib
import Courier
import Foundation
import NIOCore
import NIOPosix

extension Scenario {
    /// `cache-memory-hit` / `cache-disk-hit`: a 1 KiB JSON GET through the public request API, answered by the
    /// cache (`courier-cache`), against the same GET sent to the server by raw AsyncHTTPClient (`ahc`, set up
    /// like Courier's client): what a hit saves over the network, not over Courier's own network path.
    static func cacheHit(disk: Bool) -> Scenario {
        let name = disk ? "cache-disk-hit" : "cache-memory-hit"
        return Scenario(name: name) { target, plan in
            let url = target.base.appending(path: "json").absoluteString
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "courier-bench-cache-\(UUID().uuidString)"
            )
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache =
                disk ? ResponseCache(memory: nil, disk: try DiskCacheStore(directory: directory)) : ResponseCache()
            let cached = Session(
                configuration: Configuration {
                    $0.validators = []
                    $0.cache = cache
                }
            )
            let client = HTTPClient(
                eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
                configuration: .likeCourier()
            )
            let request = Request<Data>.get(url).cachePolicy(.cacheElseNetwork(ttl: .seconds(3600)))
            @Sendable func check(_ response: Response<Data>, fromCache: Bool) throws {
                guard response.body.count == 1024, response.isFromCache == fromCache else {
                    throw BenchError.unexpected(
                        "\(name): \(response.body.count) bytes, from cache: \(response.isFromCache)"
                    )
                }
            }
            let contenders = [
                Contender(name: "courier-cache", prepare: { _ = try await cached.send(request) }) {
                    try check(try await cached.send(request), fromCache: true)
                },
                Contender(name: "ahc") {
                    let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
                    let body = try await response.body.collect(upTo: 1 << 20)
                    guard body.readableBytes == 1024 else {
                        throw BenchError.unexpected("\(name): ahc got \(body.readableBytes) bytes")
                    }
                },
            ]
            let results = try await Throughput.compare(contenders, concurrency: 1, plan: plan).medians
            try await cached.shutdown()
            try await client.shutdown()
            let ratio = results.ratio("courier-cache", to: "ahc")
            return ScenarioResult(
                name: name,
                unit: "req/s",
                higherIsBetter: true,
                results: results,
                notes: String(
                    format:
                        "1 KiB JSON GET, one at a time, cache-else-network; %@ hit / raw AsyncHTTPClient network GET = %.1fx (target >= %dx); %d rounds of %@ each, median",
                    disk ? "disk (zlib, no memory store)" : "memory",
                    ratio,
                    disk ? 5 : 20,
                    plan.rounds,
                    "\(plan.duration)"
                )
            )
        }
    }

    /// `compress-json`: 40 MB of JSON compressed by the cache's compression path (`courier`) and by a direct
    /// call to zlib's `compress2` (`zlib`), at levels 6 (the headline) and 1; MB/s of input, and the ratio.
    static let compressJSON = Scenario(name: "compress-json") { _, plan in
        let json = Data(JSONSample.document(bytes: plan.rounds > 1 ? 40_000_000 : 4_000_000).utf8)
        var results: [String: Double] = [:]
        var level1: [String: Double] = [:]
        var ratios: [String: Double] = [:]
        for level in [6, 1] {
            let compression = CacheCompression(level: level)
            let sizes = SizeBox()
            let contenders = [
                FixedWork(name: "courier") {
                    guard let out = compression.compressIfWorthwhile(json, contentType: "application/json") else {
                        throw BenchError.unexpected("the cache chose not to compress JSON")
                    }
                    sizes.set("courier", out.count)
                },
                FixedWork(name: "zlib") { sizes.set("zlib", try ZlibDirect.compress(json, level: level)) },
            ]
            let times = try await FixedWork.compare(contenders, rounds: max(1, min(plan.rounds, 5))) { _, run in
                try await run()
            }
            for (name, time) in times.mapValues(Throughput.median) {
                let rate = Double(json.count) / 1e6 / time.seconds
                if level == 6 { results[name] = rate } else { level1[name] = rate }
                ratios[level == 6 ? name : "\(name)-level1"] = Double(json.count) / Double(max(1, sizes.get(name)))
            }
        }
        let ratio = results.ratio("courier", to: "zlib")
        let ratio1 = level1.ratio("courier", to: "zlib")
        return ScenarioResult(
            name: "compress-json",
            unit: "MB/s",
            higherIsBetter: true,
            results: results,
            metrics: ["compression_ratio": ratios, "level1_mb_per_s": level1],
            notes: String(
                format:
                    "%.0f MB of JSON; level 6: courier/zlib = %.3f, level 1: %.3f (target >= 0.9); compression ratio %.1fx at level 6 (target >= 4x)",
                Double(json.count) / 1e6,
                ratio,
                ratio1,
                ratios["courier"] ?? 0
            )
        )
    }
}

/// Sizes written by concurrently-declared contenders, read after they ran.
private final class SizeBox: Sendable {
    private let sizes = Locked<[String: Int]>([:])
    func set(_ name: String, _ size: Int) { sizes.withLock { $0[name] = size } }
    func get(_ name: String) -> Int { sizes.withLock { $0[name] ?? 0 } }
}

/// zlib's one-shot `compress2`, the baseline.
enum ZlibDirect {
    /// Compresses `data` at `level`; returns the compressed size.
    static func compress(_ data: Data, level: Int) throws -> Int {
        var size = compressBound(uLong(data.count))
        var output = [UInt8](repeating: 0, count: Int(size))
        let status = data.withUnsafeBytes { input in
            compress2(&output, &size, input.bindMemory(to: Bytef.self).baseAddress, uLong(data.count), Int32(level))
        }
        guard status == Z_OK else { throw BenchError.unexpected("compress2 failed with \(status)") }
        return Int(size)
    }
}

/// A JSON document like an API's list answer: records with ids, names, flags, numbers and text.
enum JSONSample {
    static func document(bytes: Int) -> String {
        var text = "{\"items\":["
        text.reserveCapacity(bytes + 256)
        var id = 0
        let words = ["courier", "swift", "network", "cache", "download", "upload", "linux", "actor", "stream", "zlib"]
        while text.utf8.count < bytes {
            if id > 0 { text += "," }
            text += "{\"id\":\(id),\"name\":\"\(words[id % 10]) \(words[(id / 10) % 10])\",\"active\":\(id % 3 == 0),"
            text +=
                "\"score\":\(Double(id % 1000) / 10),\"tags\":[\"\(words[id % 7])\",\"\(words[id % 5])\"],\"note\":\"item \(id) of the sample\"}"
            id += 1
        }
        return text + "]}"
    }
}
