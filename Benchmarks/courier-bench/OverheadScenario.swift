import Courier
import Foundation
import HTTPTypes
import NIOCore
import NIOPosix

extension Scenario {
    /// `session-overhead`: Courier's own work per request, without a network. `courier` sends a 1 KiB GET through
    /// a session whose transport answers from an event loop; `transport` calls that transport alone and reads the
    /// body. One request at a time, so the difference is what the session spends on a request (preparation, the
    /// pool, reading and decoding the body, and every suspension and wake-up it adds to the transport's one): a
    /// steady figure where the loopback scenarios swing from run to run.
    static let sessionOverhead = Scenario(name: "session-overhead") { _, plan in
        let (contenders, session) = try overheadContenders()
        let rates = try await Throughput.compare(contenders, concurrency: 1, plan: plan).medians
        let cpu = try await cpuPerRequest(contenders, count: plan.isQuick ? 300 : 20_000, runs: plan.isQuick ? 1 : 3)
        try await session.shutdown()
        let micros = rates.mapValues { 1_000_000 / max($0, 1) }
        return ScenarioResult(
            name: "session-overhead",
            unit: "us/req",
            higherIsBetter: false,
            results: micros,
            metrics: ["cpu_us_per_req": cpu],
            notes: String(
                format:
                    "a 1 KiB GET through a transport that answers from an event loop (a suspension and a wake-up, no sockets), one at a time; courier - transport = %.1f us of the session's own work per request (target <= 4); %d rounds of %@ each, median; "
                    + "CPU per request (user + system, all threads, %@): courier %.1f us, transport %.1f us, difference %.1f us (wall time hides part of it: at one request at a time, the session's work shortens the threads' wake-ups)",
                (micros["courier"] ?? 0) - (micros["transport"] ?? 0),
                plan.rounds,
                "\(plan.duration)",
                plan.isQuick ? "300 requests, 1 run" : "20,000 requests, median of 3 alternated runs",
                cpu["courier"] ?? 0,
                cpu["transport"] ?? 0,
                (cpu["courier"] ?? 0) - (cpu["transport"] ?? 0)
            )
        )
    }

    /// The two contenders of `session-overhead`, and the session the `courier` one sends through.
    static func overheadContenders() throws -> (contenders: [Contender], session: Session) {
        let transport = EventLoopTransport()
        let session = Session(
            configuration: Configuration {
                $0.validators = []
                $0.scheduling.coalescesRequests = false
            },
            transport: transport
        )
        let url = URL(string: "http://127.0.0.1/small")
        guard let url else { throw BenchError.unexpected("no URL") }
        let request = Request<Data>.get(url.absoluteString)
        let direct = PreparedRequest(
            method: .get,
            url: url,
            headers: [:],
            body: .empty,
            timeouts: Timeouts(),
            deadline: .now + .seconds(3600)
        )
        let contenders = [
            Contender(name: "courier") {
                let response = try await session.send(request)
                guard response.body.count == EventLoopTransport.size else {
                    throw BenchError.unexpected("courier got \(response.body.count) bytes")
                }
            },
            Contender(name: "transport") {
                var count = 0
                for try await chunk in try await transport.send(direct).body { count += chunk.readableBytes }
                guard count == EventLoopTransport.size else {
                    throw BenchError.unexpected("the transport gave \(count) bytes")
                }
            },
        ]
        return (contenders, session)
    }

    /// The child side of `session-overhead`, for profiling one contender alone:
    /// `courier-bench --overhead-child NAME:COUNT` sends COUNT requests with `courier` or `transport` after a
    /// warm-up and prints the CPU time per request in µs (`perf stat` or `perf record` around it see that
    /// contender only). With `COURIER_BENCH_NIO_EXECUTOR=1` in its environment, NIO's event loops are Swift
    /// Concurrency's global executor (`NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`),
    /// so an answer from a loop resumes its caller without a thread hop: what is left is the contender's own work.
    static func overheadChild(_ spec: String) async throws {
        if ProcessInfo.processInfo.environment["COURIER_BENCH_NIO_EXECUTOR"] == "1" {
            _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        }
        let parts = spec.split(separator: ":")
        let (contenders, session) = try overheadContenders()
        guard parts.count == 2, let count = Int(parts[1]), count > 0,
            let contender = contenders.first(where: { $0.name == parts[0] })
        else {
            throw BenchError.unexpected("--overhead-child takes NAME:COUNT with NAME courier or transport, not \(spec)")
        }
        for _ in 0..<max(count / 10, 100) { try await contender.request() }
        let before = CPUChild.cpuMicros()
        for _ in 0..<count { try await contender.request() }
        print(String(format: "%.3f", (CPUChild.cpuMicros() - before) / Double(count)))
        try await session.shutdown()
    }

    /// The process's CPU time per request of each contender, sending `count` requests one at a time, alone; the
    /// contenders take turns over `runs` runs and the median counts.
    private static func cpuPerRequest(_ contenders: [Contender], count: Int, runs: Int) async throws -> [String: Double]
    {
        var samples: [String: [Double]] = [:]
        for run in 0..<runs {
            for contender in run % 2 == 0 ? contenders : contenders.reversed() {
                let before = CPUChild.cpuMicros()
                for _ in 0..<count { try await contender.request() }
                samples[contender.name, default: []].append((CPUChild.cpuMicros() - before) / Double(count))
            }
        }
        return samples.mapValues(Throughput.median)
    }
}

/// A transport that answers every request with 1 KiB from an event loop, without sockets: what `session-overhead`
/// sends through. Its caller suspends and is woken as it would be by a network answer, so the session's own
/// suspensions and wake-ups count in the figure. Not `CourierTesting`'s `StubTransport`, which records every
/// request it sees and would grow through the run.
///
/// The session reads it in the caller's task through `send(_:cancellation:)`; the `transport` contender calls its
/// own plain `send(_:)`, the same exchange without a cancellation to register.
final class EventLoopTransport: Transport {
    static let size = 1024
    private let loop = MultiThreadedEventLoopGroup.singleton.next()
    private let body = ByteBuffer(repeating: UInt8(ascii: "c"), count: size)
    private let headers: HTTPFields = [.contentLength: String(size), .contentType: "text/plain"]

    func send(_ request: PreparedRequest) async throws -> TransportResponse {
        try await answer(cancellation: nil)
    }

    func send(_ request: PreparedRequest, cancellation: TransportCancellation) async throws -> TransportResponse {
        try await answer(cancellation: cancellation)
    }

    /// The one exchange both `send`s make, so the contenders differ only in what calls it.
    private func answer(cancellation: TransportCancellation?) async throws -> TransportResponse {
        let (body, headers) = (self.body, self.headers)
        let answer = loop.makePromise(of: TransportResponse.self)
        // NIO ignores the second completion of a promise
        cancellation?.onCancel { answer.fail(CourierError.cancelled()) }
        loop.execute {
            answer.succeed(TransportResponse(status: .ok, headers: headers, body: ByteStream(chunks: [body])))
        }
        return try await answer.futureResult.get()
    }

    func shutdown() async throws {}
}
