import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOPosix
import OpenAPIRuntime

extension Scenario {
    /// `sse-100k`: 100,000 server-sent events from the in-process server's `/events/N`, read by
    /// `session.events` against the least a caller of AsyncHTTPClient does to count events: its body stream,
    /// split at blank lines (`ahc-split`, which neither parses fields nor builds strings), and against the parsers
    /// there are: Courier's own on AsyncHTTPClient's chunks, and swift-openapi-runtime's. Events per second and
    /// CPU per event (the whole process, so the server's share too), alternating which goes first; Courier's peak
    /// RSS.
    static let sse100k = Scenario(name: "sse-100k") { target, plan in
        let count = plan.isQuick ? 10_000 : 100_000
        let rounds = plan.isQuick ? 1 : 9
        let url = target.base.appending(path: "events/\(count)").absoluteString
        let session = Session()
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: .likeCourier())
        let peakRSS = PeakRSS()
        let contenders: [(String, @Sendable () async throws -> Int)] = [
            (
                "courier",
                {
                    var received = 0
                    for try await _ in session.events(Request<Data>.get(url)) {
                        received += 1
                        if received == count { break }
                    }
                    return received
                }
            ),
            (
                "courier-stream",  // Courier's transport without the parser: session.stream, blank lines counted
                {
                    let response = try await session.stream(Request<Data>.get(url))
                    var splitter = BlankLineCounter()
                    for try await chunk in response.body { splitter.count(chunk) }
                    return splitter.events
                }
            ),
            (
                "parser-over-ahc",  // Courier's parser without its transport or an await per event
                {
                    let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(600))
                    var parser = ServerSentEventParser()
                    var events: [Courier.ServerSentEvent] = []
                    var received = 0
                    for try await chunk in response.body {
                        try chunk.withUnsafeReadableBytes { try parser.parse($0, into: &events) }
                        received += events.count
                        events.removeAll(keepingCapacity: true)
                    }
                    return received
                }
            ),
            (
                "openapi-over-ahc",  // swift-openapi-runtime's event parser on AsyncHTTPClient's body
                {
                    let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(600))
                    let slices = response.body.map { @Sendable chunk in ArraySlice(chunk.readableBytesView) }
                    var received = 0
                    for try await _ in slices.asDecodedServerSentEvents() { received += 1 }
                    return received
                }
            ),
            (
                "ahc-split",
                {
                    let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(600))
                    var splitter = BlankLineCounter()
                    for try await chunk in response.body { splitter.count(chunk) }
                    return splitter.events
                }
            ),
        ]
        let samples: EventSamples
        do {
            samples = try await EventSamples.measure(contenders, count: count, rounds: rounds, peakRSS: peakRSS)
        } catch {
            try? await session.shutdown()
            try? await client.shutdown()
            throw error
        }
        try await session.shutdown()
        try await client.shutdown()
        let (rates, cpu) = (samples.rates, samples.cpuNanosPerEvent)
        let medians = rates.mapValues(Throughput.median)
        let cpuMedians = cpu.mapValues(Throughput.median)
        let rateRatio = (medians["courier"] ?? 0) / max(medians["ahc-split"] ?? 1, 1)
        // #55's target: Courier's CPU per event against its own parser on AsyncHTTPClient's chunks with no await
        // per event, which is what a conforming parser costs; #45's against ahc-split, which parses nothing, is
        // withdrawn, and its ratio is kept only as a figure.
        let parserRatio = (cpuMedians["courier"] ?? 0) / max(cpuMedians["parser-over-ahc"] ?? 1, 0.001)
        return ScenarioResult(
            name: "sse-100k",
            unit: "events/s",
            higherIsBetter: true,
            results: medians,
            metrics: ["cpu_ns_per_event": cpuMedians, "peak_rss_mib": ["courier": peakRSS.peakMiB]],
            notes: String(
                format:
                    "courier/parser-over-ahc by CPU per event = %.2f (target <= 1.2); courier/ahc-split = %.3f events/s; CPU per event: courier %.0f ns, ahc-split %.0f, courier-stream %.0f (Courier's transport, blank lines counted), parser-over-ahc %.0f (Courier's parser on AsyncHTTPClient's chunks, no await per event), openapi-over-ahc %.0f (swift-openapi-runtime's parser on the same chunks, an await per event); the whole process, so the in-process server's share is in each; %d events a round, %d rounds taking turns, median; ahc-split counts blank lines in AsyncHTTPClient's body stream and parses nothing; %@",
                parserRatio,
                rateRatio,
                cpuMedians["courier"] ?? 0,
                cpuMedians["ahc-split"] ?? 0,
                cpuMedians["courier-stream"] ?? 0,
                cpuMedians["parser-over-ahc"] ?? 0,
                cpuMedians["openapi-over-ahc"] ?? 0,
                count,
                rounds,
                peakRSS.note
            )
        )
    }
}

/// Events per second and CPU per event of each contender, round by round.
struct EventSamples {
    var rates: [String: [Double]] = [:]
    var cpuNanosPerEvent: [String: [Double]] = [:]

    /// Runs each contender once per round (round 0 warms up and is not counted), alternating which goes first.
    static func measure(
        _ contenders: [(String, @Sendable () async throws -> Int)],
        count: Int,
        rounds: Int,
        peakRSS: PeakRSS
    ) async throws -> EventSamples {
        var samples = EventSamples()
        for round in 0...rounds {
            for (name, run) in round % 2 == 0 ? contenders : contenders.reversed() {  // order alternates
                if name == "courier" { peakRSS.reset() }
                let (start, cpuStart) = (ContinuousClock.now, CPUChild.cpuMicros())
                let received = try await run()
                let elapsed = start.duration(to: .now)
                let cpuMicros = CPUChild.cpuMicros() - cpuStart
                if name == "courier" { peakRSS.sample() }
                guard received == count else { throw BenchError.unexpected("\(name) counted \(received) events") }
                guard round > 0 else { continue }
                samples.rates[name, default: []].append(Double(count) / max(elapsed.seconds, 1e-9))
                samples.cpuNanosPerEvent[name, default: []].append(cpuMicros * 1000 / Double(count))
            }
        }
        return samples
    }
}

/// Counts the events of an event stream the cheapest way: blank lines (two line feeds in a row, across chunks).
struct BlankLineCounter {
    private(set) var events = 0
    private var lastWasLineFeed = false

    mutating func count(_ chunk: ByteBuffer) {
        chunk.withUnsafeReadableBytes { bytes in
            for byte in bytes {
                if byte == UInt8(ascii: "\n") {
                    if lastWasLineFeed { events += 1 }
                    lastWasLineFeed = true
                } else {
                    lastWasLineFeed = false
                }
            }
        }
    }
}
