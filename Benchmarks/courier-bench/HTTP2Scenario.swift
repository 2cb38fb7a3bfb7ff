import AsyncHTTPClient
import Courier
import CourierTesting
import Foundation
import NIOPosix
import NIOSSL

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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

extension Scenario {
    /// `download-h2`: one large body over TLS with HTTP/2, `courier get -s -o FILE` against `curl --http2 -s -o
    /// FILE`, each a process of its own, with wall and CPU time per process, and AsyncHTTPClient's
    /// `FileDownloadDelegate` in this process (`ahc`, set up as Courier sets it up). With `--url`, from the nginx of
    /// `Scripts/bench-nginx` (its `ssl http2` port, the one after the plain one, whose CA it serves as
    /// `/tls-ca.pem`): 1 GiB in DATA frames of nginx's `http2_chunk_size`, 8 KiB by default. Else from the
    /// in-process `CourierTesting` server speaking h2 (certificates made at start), 64 MiB (16 MiB with `--quick`).
    static let downloadH2 = Scenario(name: "download-h2") { target, plan in
        var notes = ""
        guard let courier = CLIRuns.courier(noting: &notes) else {
            return ScenarioResult(name: "download-h2", unit: "MB/s", higherIsBetter: true, results: [:], notes: notes)
        }
        let directory = try Transfers.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let caFile = directory.appendingPathComponent("ca.pem")
        var server: TestServer?
        let url: String
        let size: Int
        let source: String
        if target.server == nil, let port = target.base.port,
            let (data, answer) = try? await URLSession.shared.data(from: target.base.appending(path: "tls-ca.pem")),
            (answer as? HTTPURLResponse)?.statusCode == 200
        {
            try data.write(to: caFile)
            url = "https://localhost:\(port + 1)/big"
            size = 1 << 30
            source = "nginx (DATA frames of its http2_chunk_size)"
        } else {
            let authority = try TestCertificateAuthority()
            try Data(authority.certificatePEM.utf8).write(to: caFile)
            let started = try await TestServer.start(tls: .init(identity: try authority.issue(), http2: true))
            server = started
            size = plan.isQuick ? 16 << 20 : 64 << 20
            url = started.url("/file/\(size)").absoluteString
            source = "the in-process CourierTesting server"
        }
        let file = directory.appendingPathComponent("body.bin").path
        var commands: [(name: String, argv: [String])] = [
            ("courier", [courier.path, "get", "-s", "--cacert", caFile.path, "-o", file, url])
        ]
        if let curl = Tools.find("curl", noting: &notes) {
            commands.append(("curl", [curl.path, "-s", "--http2", "--cacert", caFile.path, "-o", file, url]))
        }
        // one run each first: both answer over HTTP/2 and write the whole body
        for (name, argv) in commands {
            let shown = try await Tools.output(
                URL(filePath: argv[0]),
                Array(argv.dropFirst()) + ["-w", "%{http_version}"]
            )
            let written = FileManager.default.sizeOfItem(atPath: file) ?? -1
            guard shown.hasPrefix("2"), written == size else {
                throw BenchError.unexpected("\(name) answered over HTTP/\(shown) and wrote \(written) of \(size) bytes")
            }
        }
        let runs = plan.isQuick ? 1 : 5
        let samples = try await ProcessUsage.measure(commands, runs: runs)
        // AsyncHTTPClient in this process, set up as Courier sets it up: what the transport under Courier costs
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile.path))
        let client = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton,
            configuration: .likeCourier(HTTPClient.Configuration(tlsConfiguration: tls))
        )
        var ahcSeconds: [Double] = []
        for _ in 0..<runs {
            let start = ContinuousClock.now
            _ = try await client.execute(
                request: try HTTPClient.Request(url: url),
                delegate: try FileDownloadDelegate(path: file)
            ).get()
            ahcSeconds.append(start.duration(to: .now).seconds)
        }
        try await client.shutdown()
        await server?.shutdown()
        var results = samples.mapValues { Double(size) / 1e6 / Throughput.median($0.map(\.wall)) }
        results["ahc"] = Double(size) / 1e6 / Throughput.median(ahcSeconds)
        let cpu = samples.mapValues { 1000 * Throughput.median($0.map(\.cpu)) }
        var versus = ""
        if results["curl"] != nil {
            versus = String(
                format:
                    "courier/curl = %.2f (target >= 1), courier/ahc = %.2f, CPU per process courier %.0f ms, curl %.0f ms; ",
                results.ratio("courier", to: "curl"),
                results.ratio("courier", to: "ahc"),
                cpu["courier"] ?? 0,
                cpu["curl"] ?? 0
            )
        }
        return ScenarioResult(
            name: "download-h2",
            unit: "MB/s",
            higherIsBetter: true,
            results: results,
            metrics: ["cpu_ms": cpu],
            notes: notes + versus
                + "\(ByteCount.format(size)) from \(source) over TLS 1.3 + HTTP/2, median of \(runs) runs each, one process per run"
        )
    }
}
