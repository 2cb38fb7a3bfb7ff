import Courier
import CourierTesting
import Foundation
import Logging
import NIOCore
import WSClient

extension Scenario {
    /// `ws-echo`: WebSocket echo through Courier's `session.webSocket` against swift-websocket's `WebSocketClient`
    /// used directly, each alone in a child process (this executable again, see ``WebSocketChild``) against the
    /// in-process loopback server's `/ws/echo`: messages per second and CPU per message (a 128-byte text message
    /// sent and its echo read, the child's user + system time), alternated over several runs; and round trips per
    /// second with one message at a time, where a batching sender gains nothing and latency shows. Then each child
    /// reads a 1 GiB stream of 64 KiB messages from `/ws/flood` and reports its peak RSS.
    static let wsEcho = Scenario(name: "ws-echo") { _, plan in
        let server = try await TestServer.start()
        let base = "ws://127.0.0.1:\(server.port)"
        let count = plan.isQuick ? 2_000 : 100_000
        let runs = plan.isQuick ? 1 : 5
        let floodCount = plan.isQuick ? 64 : 16_384
        let turnCount = plan.isQuick ? 500 : 10_000
        var rates: [String: [Double]] = [:]
        var turns: [String: [Double]] = [:]
        var cpu: [String: [Double]] = [:]
        var rss: [String: Double] = [:]
        do {
            for run in 0..<runs {
                let order = run % 2 == 0 ? WebSocketChild.contenders : WebSocketChild.contenders.reversed()
                for contender in order {
                    for (mode, messages) in [("echo", count), ("turns", turnCount)] {
                        let report = try await WebSocketChild.spawn(
                            contender,
                            mode: mode,
                            count: messages,
                            url: base + "/ws/echo"
                        )
                        if mode == "turns" {
                            turns[contender, default: []].append(report.messagesPerSecond)
                        } else {
                            rates[contender, default: []].append(report.messagesPerSecond)
                            cpu[contender, default: []].append(report.cpuMicrosPerMessage)
                        }
                    }
                }
            }
            for contender in WebSocketChild.contenders {
                let url = base + "/ws/flood?count=\(floodCount)&size=65536"
                rss[contender] = try await WebSocketChild.spawn(contender, mode: "flood", count: floodCount, url: url)
                    .peakRSSMiB
                // The same child reading 1 MiB: what the stream adds to it is the difference.
                rss[contender + "-1mib"] = try await WebSocketChild.spawn(
                    contender,
                    mode: "flood",
                    count: 16,
                    url: base + "/ws/flood?count=16&size=65536"
                ).peakRSSMiB
            }
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
        func ratio(_ samples: [String: [Double]]) -> Double {
            let pairs = zip(samples["courier"] ?? [], samples["swift-websocket"] ?? [])
            return Throughput.median(pairs.map { $0 / max($1, 0.000_001) })
        }
        return ScenarioResult(
            name: "ws-echo",
            unit: "msg/s",
            higherIsBetter: true,
            results: rates.mapValues(Throughput.median),
            metrics: [
                "cpu_us_per_msg": cpu.mapValues(Throughput.median),
                "round_trips_per_s": turns.mapValues(Throughput.median),
                "peak_rss_mib": rss,
            ],
            notes: String(
                format:
                    "%d echoes of a 128-byte text message per child, sender and reader at once on one connection; "
                    + "courier/swift-websocket = %.3f in msg/s (target >= 0.90), %.3f in CPU per message (target <= 1.10), "
                    + "medians of %d alternated runs' own ratios; %d round trips one at a time: %.3f in round trips "
                    + "per second (target >= 0.90); peak RSS reading %d MiB of 64 KiB messages: "
                    + "courier %.1f MiB, swift-websocket %.1f MiB (reading 1 MiB: %.1f and %.1f MiB); "
                    + "both validate UTF-8, neither pings nor compresses, "
                    + "both take messages up to 1 MiB; Courier's call also goes through its session (pool, monitors)",
                count,
                ratio(rates),
                ratio(cpu),
                runs,
                turnCount,
                ratio(turns),
                floodCount / 16,
                rss["courier"] ?? 0,
                rss["swift-websocket"] ?? 0,
                rss["courier-1mib"] ?? 0,
                rss["swift-websocket-1mib"] ?? 0
            )
        )
    }
}

/// The child side of `ws-echo`: `courier-bench --ws-child NAME:MODE:COUNT --url WS-URL` echoes COUNT messages
/// with the sender and the reader at once (`echo`), or one message at a time, each sent once the one before came
/// back (`turns`), or reads a stream until the server closes (`flood`) with one contender, and prints the CPU per
/// message in µs, the messages per second and the peak RSS in MiB.
enum WebSocketChild {
    static let contenders = ["courier", "swift-websocket"]
    static let maxMessage = 1 << 20
    static let text = String(repeating: "courier!", count: 16)

    struct Report {
        var cpuMicrosPerMessage: Double
        var messagesPerSecond: Double
        var peakRSSMiB: Double
    }

    /// Runs this executable as a child for one contender and returns what it reports.
    static func spawn(_ contender: String, mode: String, count: Int, url: String) async throws -> Report {
        let text = try await Tools.output(
            Tools.benchmark,
            ["--ws-child", "\(contender):\(mode):\(count)", "--url", url]
        )
        let numbers = text.split(separator: " ").compactMap {
            Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        guard numbers.count == 3 else {
            throw BenchError.unexpected("the \(contender) WebSocket child printed '\(text)'")
        }
        return Report(cpuMicrosPerMessage: numbers[0], messagesPerSecond: numbers[1], peakRSSMiB: numbers[2])
    }

    /// The child's work.
    static func run(_ spec: String, url: String) async throws {
        let parts = spec.split(separator: ":").map(String.init)
        guard parts.count == 3, contenders.contains(parts[0]), ["echo", "turns", "flood"].contains(parts[1]),
            let count = Int(parts[2]), count > 0
        else { throw BenchError.unexpected("--ws-child takes NAME:echo|turns|flood:COUNT, not \(spec)") }
        let echoes = parts[1] == "echo"
        let takesTurns = parts[1] == "turns"
        let clock = ContinuousClock()
        var started: (cpu: Double, time: ContinuousClock.Instant)?
        let received: Int
        if parts[0] == "courier" {
            let session = Session()
            received = try await session.webSocket(
                Request<Data>.get(url),
                options: WebSocketOptions(maxMessageBytes: maxMessage)
            ) { socket in
                started = (CPUChild.cpuMicros(), clock.now)
                if takesTurns {
                    var messages = socket.makeAsyncIterator()
                    for turn in 0..<count {
                        try await socket.send(.text(text))
                        guard try await messages.next() != nil else { return turn }
                    }
                    return count
                }
                return try await withThrowingTaskGroup(of: Void.self) { group in
                    if echoes { group.addTask { for _ in 0..<count { try await socket.send(.text(text)) } } }
                    var received = 0
                    for try await _ in socket {
                        received += 1
                        if echoes, received == count { break }
                    }
                    try await group.waitForAll()
                    return received
                }
            }
            try await session.shutdown()
        } else {
            let counted = Counted()
            let begun = Counted.Start()
            try await WebSocketClient.connect(
                url: url,
                configuration: WebSocketClientConfiguration(maxFrameSize: maxMessage, validateUTF8: true),
                logger: Logger(label: "ws-echo")
            ) { inbound, outbound, _ in
                begun.set(CPUChild.cpuMicros(), clock.now)
                if takesTurns {
                    var messages = inbound.messages(maxSize: maxMessage).makeAsyncIterator()
                    var turns = 0
                    while turns < count {
                        try await outbound.write(.text(text))
                        guard try await messages.next() != nil else { break }
                        turns += 1
                    }
                    return counted.set(turns)
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    if echoes { group.addTask { for _ in 0..<count { try await outbound.write(.text(text)) } } }
                    var received = 0
                    for try await _ in inbound.messages(maxSize: maxMessage) {
                        received += 1
                        if echoes, received == count { break }
                    }
                    try await group.waitForAll()
                    counted.set(received)
                }
            }
            received = counted.value
            started = begun.value
        }
        guard let started, received == count else {
            throw BenchError.unexpected("\(parts[0]) received \(received) of \(count) messages")
        }
        let seconds = (clock.now - started.time).seconds
        let cpu = (CPUChild.cpuMicros() - started.cpu) / Double(count)
        print(String(format: "%.3f %.1f %.1f", cpu, Double(count) / max(seconds, 0.000_001), peakRSSMiB()))
    }

    /// This process's peak RSS: `VmHWM`, the high-water mark of its own memory. Not `ru_maxrss`, which Linux
    /// carries across `execve` from the forked parent, so every child of a large parent reported the parent's size.
    static func peakRSSMiB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kiB = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
        else { return 0 }
        return kiB / 1024
    }
}

/// What the swift-websocket child's handler, a `@Sendable` closure, hands back.
private final class Counted: Sendable {
    private let box = Locked(0)
    func set(_ value: Int) { box.withLock { $0 = value } }
    var value: Int { box.withLock { $0 } }

    final class Start: Sendable {
        private let box = Locked<(cpu: Double, time: ContinuousClock.Instant)?>(nil)
        func set(_ cpu: Double, _ time: ContinuousClock.Instant) { box.withLock { $0 = (cpu, time) } }
        var value: (cpu: Double, time: ContinuousClock.Instant)? { box.withLock { $0 } }
    }
}
