import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import NIOCore
import Testing

/// Issue 9's fault matrix: every fault the test server injects, against every kind of call. Each cell ends in
/// one of the fault's documented error codes or in a correct result, within its time; afterwards the pool is
/// empty, nothing broken was cached or left at a download's destination, and the same session still gets a
/// healthy answer (a connection with a framing error in it was not reused).
@Suite("Fault matrix: every fault against every kind of call", .serialized, .timeLimit(.minutes(3)))
struct FaultMatrixTests {
    @Test(arguments: Fault.all, CallKind.allCases)
    func theFaultEndsCleanly(fault: Fault, kind: CallKind) async throws {
        let cache = ResponseCache()
        try await withTestServer { other in
            try await withServerSession({
                // the stalls end here; less makes a loaded machine time out mid-decompression
                $0.timeouts.readIdle = .seconds(3)
                $0.defaultHeaders[.authorization] = "Bearer matrix-secret"
                $0.cache = cache
            }) { session, server in
                let path = fault.path.replacingOccurrences(of: "{other}", with: other.baseURL.absoluteString)
                let start = ContinuousClock.now
                guard
                    let outcome = try await within(
                        .seconds(20),
                        { try await kind.run(path, server: server, session: session, cache: cache) }
                    )
                else {
                    Issue.record("\(fault) as \(kind) did not end within 20 s")
                    return
                }
                let elapsed = start.duration(to: .now)

                switch outcome {
                case .success(let body):
                    #expect(
                        fault.accepts(body, as: kind),
                        "\(fault) as \(kind) succeeded with a wrong body (\(body.count) bytes)"
                    )
                case .failure(let error):
                    #expect(
                        fault.codes.contains(error.code),
                        "\(fault) as \(kind) ended in \(error.code): \(error.message)"
                    )
                }
                #expect(elapsed < .seconds(10), "\(fault) as \(kind) took \(elapsed)")
                let ended =
                    switch outcome {
                    case .success: "ok"
                    case .failure(let error): error.code.rawValue
                    }
                ReliabilityFigures.record(
                    "fault-matrix",
                    [
                        "fault": fault.name, "kind": kind.rawValue, "ended": ended,
                        "milliseconds": Int(elapsed.seconds * 1000),
                    ]
                )
                await eventually("the pool empties") { await session.pool.isEmpty }

                // The session still works. After a surplus past Content-Length, the first request on the reused
                // connection may read the surplus and fail; that connection is then closed, so the next one succeeds.
                let healthy = Request<Data>.get("/small", query: ["after": .string(fault.name)])
                if fault.poisonsItsConnection { _ = try? await session.send(healthy) }
                let answer = try await session.send(healthy)
                #expect(answer.status == .ok && answer.body == ServerFiles.smallData)
            }
        }
    }
}

/// One fault and what it may end in.
struct Fault: Sendable, CustomStringConvertible {
    let name: String
    /// The request path; `{other}` becomes a second server's base URL.
    let path: String
    /// The error codes that are a correct end.
    let codes: Set<CourierError.Code>
    /// When a successful answer is also correct: whether its body is the right one.
    let correctBody: (@Sendable (Data) -> Bool)?
    /// For a download, which keeps the bytes as the server sent them (`Accept-Encoding: identity`, no decoding,
    /// as curl and wget do): whether the file holds exactly those.
    var storedAsSent: (@Sendable (Data) -> Bool)? = nil

    var description: String { name }

    /// A server that sends more than its Content-Length poisons the connection for whoever reuses it before the
    /// surplus arrives: that request reads the surplus as its answer and fails (`invalidResponse`, or
    /// `connectionClosed` as the connection is torn down), and the connection is closed. No HTTP/1.1 client can
    /// see it coming; curl has the same race.
    var poisonsItsConnection: Bool { path.contains("claimed=10&") }

    func accepts(_ body: Data, as kind: CallKind) -> Bool {
        if kind == .download, let storedAsSent { return storedAsSent(body) }
        return correctBody?(body) ?? false
    }

    static let framing: Set<CourierError.Code> = [.invalidResponse]

    static let all: [Fault] = [
        Fault(
            name: "FIN at byte K",
            path: "/fault/close-at/1000?size=50000",
            codes: [.connectionClosed],
            correctBody: nil
        ),
        Fault(
            name: "RST before the head",
            path: "/fault/reset",
            codes: [.connectionReset, .connectionClosed],
            correctBody: nil
        ),
        Fault(
            name: "RST mid-body",
            path: "/fault/reset?after=5000",
            codes: [.connectionReset, .connectionClosed],
            correctBody: nil
        ),
        Fault(
            name: "Content-Length too long",
            path: "/fault/wrong-length?claimed=1000&actual=10",
            codes: [.connectionClosed],
            correctBody: nil
        ),
        Fault(
            name: "Content-Length too short",
            path: "/fault/wrong-length?claimed=10&actual=1000",
            codes: framing,
            correctBody: { $0 == Data(ServerFiles.bytes(offset: 0, count: 10)) }
        ),
        Fault(name: "garbage chunk size", path: "/fault/bad-chunked", codes: framing, correctBody: nil),
        Fault(
            name: "bare LF in chunked framing",
            path: "/fault/bad-chunked?kind=bare-lf",
            codes: framing,
            correctBody: nil
        ),
        Fault(
            name: "overflowing chunk size",
            path: "/fault/bad-chunked?kind=overflow",
            codes: framing,
            correctBody: nil
        ),
        Fault(name: "two Content-Length headers", path: "/fault/two-lengths", codes: framing, correctBody: nil),
        Fault(name: "Content-Length with chunked", path: "/fault/length-and-chunked", codes: framing, correctBody: nil),
        Fault(name: "stall before the head", path: "/fault/stall?at=head", codes: [.timeout], correctBody: nil),
        Fault(name: "stall mid-body", path: "/fault/stall", codes: [.timeout], correctBody: nil),
        Fault(
            name: "invalid gzip",
            path: "/fault/bad-gzip",
            codes: [.decompression],
            correctBody: nil,
            storedAsSent: { $0 == Data(ServerFiles.bytes(offset: 7, count: 512)) }
        ),
        Fault(
            name: "stacked encodings",
            path: "/fault/stacked-gzip",
            codes: [.decompression],
            correctBody: nil,
            storedAsSent: { $0.starts(with: [0x1F, 0x8B]) }
        ),
        Fault(
            name: "decompression bomb",
            path: "/fault/bomb",
            codes: [.decompression, .bodyTooLarge],
            correctBody: nil,
            storedAsSent: { body in (try? ServerFiles.zeroBomb()).map { body == Data($0.readableBytesView) } ?? false }
        ),
        Fault(name: "1 MiB header", path: "/fault/huge-header", codes: framing, correctBody: nil),
        Fault(
            name: "redirect loop",
            path: "/redirect-loop",
            codes: [.redirectLoop, .tooManyRedirects],
            correctBody: nil
        ),
        Fault(
            name: "cross-origin redirect",
            path: "/redirect-to?url={other}/echo",
            codes: [],
            correctBody: { body in
                guard let echo = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return false }
                let headers = echo["headers"] as? [String: Any] ?? [:]
                return echo["path"] as? String == "/echo" && headers["authorization"] == nil
            }
        ),
    ]
}

/// The kinds of call a fault can hit.
enum CallKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case plain, cached, download, upload, batchMember, chainStep
    /// A GET through a session that turns on no optional step and no coalescing: a call of its own.
    case leanSession

    var description: String { rawValue }

    /// Runs `path` as this kind of call: the body it got, or the error it ended in. Checks what each kind
    /// must leave behind (no cache entry for a failure, no file at a download's destination).
    func run(
        _ path: String,
        server: TestServer,
        session: Session,
        cache: ResponseCache
    ) async throws -> Result<Data, CourierError> {
        switch self {
        case .plain:
            return await outcome { try await session.send(Request<Data>.get(path)).body }
        case .leanSession:
            let configuration = Configuration {
                $0.baseURL = server.baseURL
                $0.timeouts.readIdle = .seconds(3)
                $0.scheduling.coalescesRequests = false
            }
            return try await withSession(configuration) { other in
                let result = await outcome { try await other.send(Request<Data>.get(path)).body }
                await eventually("the \(self) session's pool empties") { await other.pool.isEmpty }
                return result
            }
        case .cached:
            var request = Request<Data>.get(path)
            request.cachePolicy = .cacheElseNetwork()
            let result = await outcome { try await session.send(request).body }
            let stored = await cache.entries()
            if case .failure = result { #expect(stored.isEmpty, "a failed answer was cached") }
            return result
        case .download:
            let directory = try temporaryDownloadDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let target = directory.appendingPathComponent("fault.bin")
            let manager = try DownloadManager(session: session)
            let url = path.hasPrefix("/") ? server.url(path) : URL(filePath: path)
            let result = await outcome {
                let download = try await manager.add(
                    url,
                    to: .file(target),
                    options: DownloadOptions(
                        retries: 1,
                        retryDelay: .milliseconds(10),
                        idleTimeout: .seconds(3)
                    )
                )
                return try Data(contentsOf: try await download.completion())
            }
            if case .failure = result {
                #expect(!FileManager.default.fileExists(atPath: target.path), "a partial file at the destination")
            }
            return result
        case .upload:
            return await outcome {
                try await session.upload(Request<Data>.post(path, body: .bytes(Data(repeating: 7, count: 64 * 1024))))
                    .response.body
            }
        case .batchMember:
            let requests = [Request<Data>.get("/small"), .get(path), .get("/small", query: ["n": 2])]
            let batch = try await session.batch(requests, options: BatchOptions(concurrency: 3))
            for index in [0, 2] {
                guard case .failure(let error) = batch.results[index] else { continue }
                let poisoned =
                    path.contains("claimed=10&") && [.invalidResponse, .connectionClosed].contains(error.code)
                if !poisoned { Issue.record("a healthy batch member failed: \(error)") }
            }
            return batch.results[1].map(\.body)
        case .chainStep:
            let result = await outcome {
                try await session.chain { chain in
                    _ = try await chain.step("healthy", Request<Data>.get("/small"))
                    return try await chain.step("faulty", Request<Data>.get(path)).body
                }.value
            }
            // A failing step fails the chain; the step's own error is the one the matrix judges.
            return result.mapError { error in
                #expect(error.code == .chainFailed && error.step == 1 && error.stepName == "faulty")
                return (error.underlying as? CourierError) ?? error
            }
        }
    }

    private func outcome(_ body: () async throws -> Data) async -> Result<Data, CourierError> {
        do {
            return .success(try await body())
        } catch let error as CourierError {
            return .failure(error)
        } catch {
            Issue.record("not a CourierError: \(error)")
            return .failure(CourierError(code: .transport, message: "\(error)"))
        }
    }
}

/// `body`'s result, or `nil` when it has not ended after `limit` (it is then cancelled and left behind), so a
/// hang fails one cell instead of stopping the whole run.
func within<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T? {
    let slot = Locked<CheckedContinuation<T?, any Error>?>(nil)
    return try await withCheckedThrowingContinuation { continuation in
        slot.withLock { $0 = continuation }
        let work = Task {
            do {
                let value = try await body()
                slot.withLock { $0.take() }?.resume(returning: value)
            } catch {
                slot.withLock { $0.take() }?.resume(throwing: error)
            }
        }
        Task {
            try? await Task.sleep(for: limit)
            guard let waiting = slot.withLock({ $0.take() }) else { return }
            work.cancel()
            waiting.resume(returning: nil)
        }
    }
}
