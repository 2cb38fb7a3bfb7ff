import Courier
import Foundation
import HTTPTypes
import NIOCore

extension Scenario {
    /// `session-overhead`: Courier's own work per request, without a network. `courier` sends a 1 KiB GET through
    /// a session whose transport answers at once; `transport` calls that transport alone and reads the body. One
    /// request at a time, so the difference is the CPU the session spends on a request (preparation, the pool,
    /// its task, reading and decoding the body): a steady figure where the loopback scenarios swing from run to run.
    static let sessionOverhead = Scenario(name: "session-overhead") { _, plan in
        let transport = ImmediateTransport()
        let session = Session(configuration: Configuration { $0.validators = []; $0.scheduling.coalescesRequests = false },
                              transport: transport)
        let url = URL(string: "http://127.0.0.1/small")
        guard let url else { throw BenchError.unexpected("no URL") }
        let request = Request<Data>.get(url.absoluteString)
        let direct = TransportRequest(method: .get, url: url, headers: [:], body: .empty, timeouts: Timeouts(), deadline: .now + .seconds(3600))
        let contenders = [
            Contender(name: "courier") {
                let response = try await session.send(request)
                guard response.body.count == ImmediateTransport.size else { throw BenchError.unexpected("courier got \(response.body.count) bytes") }
            },
            Contender(name: "transport") {
                var count = 0
                for try await chunk in try await transport.send(direct).body { count += chunk.readableBytes }
                guard count == ImmediateTransport.size else { throw BenchError.unexpected("the transport gave \(count) bytes") }
            },
        ]
        let rates = try await Throughput.compare(contenders, concurrency: 1, plan: plan).medians
        try await session.shutdown()
        let micros = rates.mapValues { 1_000_000 / max($0, 1) }
        return ScenarioResult(
            name: "session-overhead", unit: "us/req", higherIsBetter: false, results: micros,
            notes: String(format: "a 1 KiB GET through a transport that answers at once, one at a time; courier - transport = %.1f us of the session's own work per request; %d rounds of %@ each, median; no target (a diagnostic for get-small and batch-10k)",
                          (micros["courier"] ?? 0) - (micros["transport"] ?? 0), plan.rounds, "\(plan.duration)"))
    }
}

/// A transport that answers every request at once with 1 KiB, without sockets: what `session-overhead` sends through.
/// Not `CourierTesting`'s `StubTransport`, which records every request it sees and would grow through the run.
final class ImmediateTransport: Transport {
    static let size = 1024
    private let body = ByteBuffer(repeating: UInt8(ascii: "c"), count: size)
    private let headers: HTTPFields = [.contentLength: String(size), .contentType: "text/plain"]

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        TransportResponse(status: .ok, headers: headers, body: ByteStream(chunks: [body]))
    }

    func shutdown() async throws {}
}
