import AsyncHTTPClient
import Courier
import CourierTesting
import Foundation
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
        let sessions = RoundClient.sessions(
            Configuration {
                $0.validators = []
                $0.scheduling.coalescesRequests = false
                $0.tls.default = TLSPolicy(trustRoots: .pem(authority.certificatePEM))
            }
        )
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(authority.certificatePEM.utf8)))
        let clients = RoundClient.httpClients(.likeCourier(HTTPClient.Configuration(tlsConfiguration: tls)))
        let defaultClients = RoundClient.httpClients(HTTPClient.Configuration(tlsConfiguration: tls))
        let contenders = smallGets(url, courier: sessions, ahc: clients, ahcDefaults: defaultClients)
        let results = try await Throughput.compare(contenders, concurrency: 64, plan: plan)
        try await sessions.shutdown()
        try await clients.shutdown()
        try await defaultClients.shutdown()
        let connections = server.counter("h2-connections")
        await server.shutdown()
        let ratio = results.medians.ratio("courier", to: "ahc")
        return ScenarioResult(
            name: "get-small-h2-c64",
            unit: "req/s",
            higherIsBetter: true,
            results: results.medians,
            metrics: ["h2_connections": ["all": Double(connections)]],
            notes: String(
                format:
                    "courier/ahc = %.3f (target >= 0.95; middle half of the rounds %@); TLS 1.3 + HTTP/2 (ALPN) to the in-process "
                    + "CourierTesting server, %d HTTP/2 connections in all; %d rounds of %@ each, median, each round on new clients; ahc is set up as Courier sets it up, ahc-defaults is AsyncHTTPClient's default configuration",
                ratio,
                results.spread("courier", to: "ahc"),
                connections,
                plan.rounds,
                "\(plan.duration)"
            )
        )
    }
}
