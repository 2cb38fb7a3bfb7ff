import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOPosix

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A named benchmark scenario.
struct Scenario: Sendable {
    var name: String
    var run: @Sendable (BenchTarget, RoundPlan) async throws -> ScenarioResult

    static let all: [Scenario] = [
        getSmall(concurrency: 1), getSmall(concurrency: 64), getSmallH2, batch10k, coalesce1000,
        cacheHit(disk: false), cacheHit(disk: true), compressJSON, sessionOverhead, cpuPerRequest,
        download1G, downloadSegmented, downloadH2, uploadMultipart1G, uploadResumable1G, uploadGzip, cliGet1G, cliGet1K,
        soak,
        fleetCache,
        queueWorkers, sse100k, wsEcho,
    ]

    /// `get-small-cN`: 1 KiB GETs over keep-alive connections, N at a time.
    static func getSmall(concurrency: Int) -> Scenario {
        Scenario(name: "get-small-c\(concurrency)") { target, plan in
            let url = target.base.appending(path: "small")
            // Every worker asks for the same URL; sharing calls would measure coalescing, not the transport.
            let sessions = RoundClient.sessions(
                Configuration {
                    $0.validators = []
                    $0.scheduling.coalescesRequests = false
                }
            )
            let clients = RoundClient.httpClients(.likeCourier())
            let defaultClients = RoundClient.httpClients(HTTPClient.Configuration())
            let urlSessions = RoundClient(
                make: { URLSession(configuration: .ephemeral) },
                close: { $0.invalidateAndCancel() }
            )
            let contenders =
                smallGets(url.absoluteString, courier: sessions, ahc: clients, ahcDefaults: defaultClients) + [
                    Contender(name: "urlsession", renew: urlSessions.renew) {
                        let (data, _) = try await urlSessions.client.data(from: url)
                        guard data.count == 1024 else {
                            throw BenchError.unexpected("urlsession got \(data.count) bytes")
                        }
                    }
                ]
            let results = try await Throughput.compare(contenders, concurrency: concurrency, plan: plan)
            try await sessions.shutdown()
            try await clients.shutdown()
            try await defaultClients.shutdown()
            try await urlSessions.shutdown()
            let ratio = results.medians.ratio("courier", to: "ahc")
            return ScenarioResult(
                name: "get-small-c\(concurrency)",
                unit: "req/s",
                higherIsBetter: true,
                results: results.medians,
                notes: String(
                    format:
                        "courier/ahc = %.3f (target >= 0.95; middle half of the rounds %@); %d rounds of %@ each, median, each round on new clients; default connection pools; coalescing off; ahc is set up as Courier sets it up (no tracing, redirects, decompression or connection retries), ahc-defaults is AsyncHTTPClient's default configuration",
                    ratio,
                    results.spread("courier", to: "ahc"),
                    plan.rounds,
                    "\(plan.duration)"
                )
            )
        }
    }
}

extension Scenario {
    /// Courier and raw AsyncHTTPClient (`ahc`, set up like Courier's client, and `ahc-defaults`, its default
    /// configuration) each GETting the 1 KiB `/small` at `url`, checking they got all of it; each on a new client
    /// every round.
    static func smallGets(
        _ url: String,
        courier sessions: RoundClient<Session>,
        ahc clients: RoundClient<HTTPClient>,
        ahcDefaults defaultClients: RoundClient<HTTPClient>
    ) -> [Contender] {
        let courierRequest = Request<Data>.get(url)
        func ahc(_ name: String, _ clients: RoundClient<HTTPClient>) -> Contender {
            Contender(name: name, renew: clients.renew) {
                let response = try await clients.client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 1 << 20)
                guard body.readableBytes == 1024 else {
                    throw BenchError.unexpected("\(name) got \(body.readableBytes) bytes")
                }
            }
        }
        return [
            Contender(name: "courier", renew: sessions.renew) {
                let response = try await sessions.client.send(courierRequest)
                guard response.body.count == 1024 else {
                    throw BenchError.unexpected("courier got \(response.body.count) bytes")
                }
            },
            ahc("ahc", clients),
            ahc("ahc-defaults", defaultClients),
        ]
    }
}

enum BenchError: Error, CustomStringConvertible {
    case unexpected(String)
    var description: String { if case .unexpected(let text) = self { text } else { "" } }
}
