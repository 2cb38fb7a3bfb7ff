import AsyncHTTPClient
import Courier
import CourierTesting
import Foundation
import NIOCore
import NIOPosix
import NIOSSL

extension Scenario {
    /// `get-small-h2-c64`: 1 KiB GETs, 64 at a time, over TLS with HTTP/2 chosen through ALPN, to the in-process
    /// `CourierTesting` server (certificates made at start); Courier against raw AsyncHTTPClient. `--url` does
    /// not apply: the scenario needs a server that speaks h2 with a CA it trusts.
    static let getSmallH2 = Scenario(name: "get-small-h2-c64") { _, plan in
        let authority = try TestCertificateAuthority()
        let server = try await TestServer.start(tls: .init(identity: try authority.issue(), http2: true))
        let url = server.url("/small").absoluteString
        let session = Session(configuration: Configuration {
            $0.validators = []
            $0.scheduling.coalescesRequests = false
            $0.tls.default = TLSPolicy(trustRoots: .pem(authority.certificatePEM))
        })
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(authority.certificatePEM.utf8)))
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
        let courierRequest = Request<Data>.get(url)
        let contenders = [
            Contender(name: "courier") {
                let response = try await session.send(courierRequest)
                guard response.body.count == 1024 else { throw BenchError.unexpected("courier got \(response.body.count) bytes") }
            },
            Contender(name: "ahc") {
                let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 1 << 20)
                guard body.readableBytes == 1024 else { throw BenchError.unexpected("ahc got \(body.readableBytes) bytes") }
            },
        ]
        let results = try await Throughput.compare(contenders, concurrency: 64, plan: plan)
        try await session.shutdown()
        try await client.shutdown()
        let connections = server.counter("h2-connections")
        await server.shutdown()
        let ratio = (results["courier"] ?? 0) / max(results["ahc"] ?? 1, 1)
        return ScenarioResult(
            name: "get-small-h2-c64", unit: "req/s", higherIsBetter: true, results: results,
            metrics: ["h2_connections": ["all": Double(connections)]],
            notes: String(format: "courier/ahc = %.3f (target >= 0.95); TLS 1.3 + HTTP/2 (ALPN) to the in-process CourierTesting server, "
                          + "%d HTTP/2 connections in all; %d rounds of %@ each, median", ratio, connections, plan.rounds, "\(plan.duration)"))
    }
}
