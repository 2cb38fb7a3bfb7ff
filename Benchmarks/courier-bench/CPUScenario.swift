import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

extension Scenario {
    /// `cpu-per-request`: the CPU time each contender spends per 1 KiB GET, each alone in a child process (this
    /// executable again, see ``CPUChild``) against the loopback server (or `--url`), at one and at 64 requests in
    /// flight. CPU time per request swings far less than throughput on a shared machine, so it shows differences of
    /// a few percent that the req/s scenarios hide. The contenders take turns over several runs; a ratio is the
    /// median of the runs' own ratios, each between children that ran minutes apart at most, so a change in the
    /// machine's load between runs moves it less than it moves the contenders' medians. Nine runs: a child's CPU
    /// per request moves by a tenth between runs on a shared machine (raw AsyncHTTPClient's most of all), and the
    /// median of five runs' ratios still moved from 1.04 to 1.18 between runs of the scenario.
    static let cpuPerRequest = Scenario(name: "cpu-per-request") { target, plan in
        let base = target.base.absoluteString
        let runs = plan.isQuick ? 1 : 9
        let loads = plan.isQuick ? [(1, 300), (64, 1_280)] : [(1, 20_000), (64, 50_000)]
        var samples: [String: [Double]] = [:]
        for (concurrency, count) in loads {
            for run in 0..<runs {
                let order = run % 2 == 0 ? CPUChild.contenders : CPUChild.contenders.reversed()
                for contender in order {
                    let micros = try await CPUChild.spawn(contender, concurrency: concurrency, count: count, base: base)
                    samples["\(contender)-c\(concurrency)", default: []].append(micros)
                }
            }
        }
        let medians = samples.mapValues(Throughput.median)
        func ratio(_ contender: String, _ concurrency: Int) -> Double {
            let pairs = zip(samples["\(contender)-c\(concurrency)"] ?? [], samples["ahc-c\(concurrency)"] ?? [])
            let ratios = pairs.map { $0 / max($1, 0.001) }
            return ratios.isEmpty ? 0 : Throughput.median(ratios)
        }
        func range(_ contender: String, _ concurrency: Int) -> String {
            let values = (samples["\(contender)-c\(concurrency)"] ?? []).sorted()
            return values.isEmpty ? "n/a" : String(format: "%.1f-%.1f", values[0], values[values.count - 1])
        }
        let counts = loads.map { "\($0.1) GETs at c\($0.0)" }.joined(separator: ", ")
        return ScenarioResult(
            name: "cpu-per-request",
            unit: "cpu-us/req",
            higherIsBetter: false,
            results: medians,
            notes: String(
                format:
                    "user + system CPU of a child process per request, measured over the timed requests only (after a warm-up); "
                    + "courier/ahc = %.3f at c1 (target <= 1.10), %.3f at c64 (target <= 1.15); ahc-defaults/ahc = %.3f at c1, %.3f at c64; "
                    + "ahc-delegate/ahc (AsyncHTTPClient's delegate API, which Courier uses, read the least way) = %.3f at c1, %.3f at c64; "
                    + "courier-defaults/ahc (Courier's default configuration: coalescing and status validation on; at c64 its identical GETs share calls) = %.3f at c1, %.3f at c64; "
                    + "courier ranges %@ (c1), %@ (c64), ahc %@ (c1), %@ (c64); %@; ratios are the median of %d alternated runs' own ratios; "
                    + "courier: coalescing and validators off; ahc is set up as Courier sets it up",
                ratio("courier", 1),
                ratio("courier", 64),
                ratio("ahc-defaults", 1),
                ratio("ahc-defaults", 64),
                ratio("ahc-delegate", 1),
                ratio("ahc-delegate", 64),
                ratio("courier-defaults", 1),
                ratio("courier-defaults", 64),
                range("courier", 1),
                range("courier", 64),
                range("ahc", 1),
                range("ahc", 64),
                counts,
                runs
            )
        )
    }
}

/// The child side of `cpu-per-request`: `courier-bench --cpu-child NAME:CONCURRENCY:COUNT --url BASE` sends COUNT
/// GETs of `BASE/small` with one contender, CONCURRENCY at a time, after a warm-up, and prints the CPU time
/// (user + system, all threads) the timed requests took per request, in µs.
enum CPUChild {
    static let contenders = ["courier", "courier-defaults", "ahc", "ahc-defaults", "ahc-delegate"]

    /// Runs this executable as a child for one contender and returns the µs of CPU per request it reports.
    static func spawn(_ contender: String, concurrency: Int, count: Int, base: String) async throws -> Double {
        let text = try await Tools.output(
            Tools.benchmark,
            ["--cpu-child", "\(contender):\(concurrency):\(count)", "--url", base]
        )
        guard let micros = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw BenchError.unexpected("the \(contender) child printed '\(text)'")
        }
        return micros
    }

    /// The child's work; prints µs of CPU per timed request.
    static func run(_ spec: String, base: String) async throws {
        let parts = spec.split(separator: ":")
        guard parts.count == 3, contenders.contains(String(parts[0])), let concurrency = Int(parts[1]),
            let count = Int(parts[2]),
            concurrency > 0, count >= concurrency
        else {
            throw BenchError.unexpected(
                "--cpu-child takes NAME:CONCURRENCY:COUNT with NAME one of \(contenders), not \(spec)"
            )
        }
        let url = base.hasSuffix("/") ? base + "small" : base + "/small"
        let (request, close) = contender(String(parts[0]), url: url)
        // warm-up: connections open
        try await requests(max(concurrency * 20, count / 10), concurrency: concurrency, request)
        let before = cpuMicros()
        try await requests(count, concurrency: concurrency, request)
        let spent = cpuMicros() - before
        try await close()
        print(String(format: "%.3f", spent / Double(count)))
    }

    private static func contender(
        _ name: String,
        url: String
    ) -> (request: @Sendable () async throws -> Void, close: @Sendable () async throws -> Void) {
        if name == "courier" || name == "courier-defaults" {
            let configuration =
                name == "courier"
                ? Configuration {
                    $0.validators = []
                    $0.scheduling.coalescesRequests = false
                } : Configuration()
            let session = Session(configuration: configuration)
            let request = Request<Data>.get(url)
            return (
                {
                    let response = try await session.send(request)
                    guard response.body.count == 1024 else {
                        throw BenchError.unexpected("courier got \(response.body.count) bytes")
                    }
                }, { try await session.shutdown() }
            )
        }
        let configuration: HTTPClient.Configuration =
            name == "ahc-defaults" ? HTTPClient.Configuration() : .likeCourier()
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        if name == "ahc-delegate" {
            return (
                {
                    let request = try HTTPClient.Request(url: url)
                    let loop = client.eventLoopGroup.next()
                    let body = try await client.execute(
                        request: request,
                        delegate: CollectingBodyDelegate(loop: loop),
                        eventLoop: .delegate(on: loop)
                    ).futureResult.get()
                    guard body.readableBytes == 1024 else {
                        throw BenchError.unexpected("\(name) got \(body.readableBytes) bytes")
                    }
                }, { try await client.shutdown() }
            )
        }
        return (
            {
                let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 1 << 20)
                guard body.readableBytes == 1024 else {
                    throw BenchError.unexpected("\(name) got \(body.readableBytes) bytes")
                }
            }, { try await client.shutdown() }
        )
    }

    /// Sends `count` requests (rounded down to a multiple of `concurrency`), `concurrency` at a time.
    private static func requests(
        _ count: Int,
        concurrency: Int,
        _ request: @escaping @Sendable () async throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<concurrency {
                group.addTask { for _ in 0..<(count / concurrency) { try await request() } }
            }
            try await group.waitForAll()
        }
    }

    /// User + system CPU time of this process so far (every thread), in µs.
    static func cpuMicros() -> Double {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        func micros(_ time: timeval) -> Double { Double(time.tv_sec) * 1e6 + Double(time.tv_usec) }
        return micros(usage.ru_utime) + micros(usage.ru_stime)
    }
}

/// The least a caller of AsyncHTTPClient's delegate API does to read a body whole: the `ahc-delegate` contender,
/// which tells how much of Courier's CPU per request is the delegate API itself and how much is Courier.
private final class CollectingBodyDelegate: HTTPClientResponseDelegate {
    typealias Response = ByteBuffer
    private let body: NIOLoopBoundBox<ByteBuffer>

    init(loop: any EventLoop) {
        body = .makeBoxSendingValue(ByteBuffer(), eventLoop: loop)
    }

    func didReceiveBodyPart(task: HTTPClient.Task<ByteBuffer>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        var buffer = buffer
        body.value.writeBuffer(&buffer)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<ByteBuffer>) throws -> ByteBuffer { body.value }
}
