import ArgumentParser
import Courier
import CourierTesting
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `courier demo`: an offline tour. It starts the loopback server and shows, step by step, what the library does.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Tour Courier offline against its embedded loopback server.",
        discussion: HelpText.reflow(
            """
            Needs no network. Each step prints what happened; the exit code is 0 only if every step behaved as expected.
            Example:
              courier demo
            """
        )
    )

    @Option(
        help: ArgumentHelp(
            "A PostgreSQL database for the fleet steps (default $COURIER_POSTGRES_URL); needs a build with --traits Postgres.",
            valueName: "url"
        )
    )
    var db: String?

    func run() async throws {
        try await Output.exitOnFailure {
            let server = try await TestServer.start()
            defer { Task { await server.shutdown() } }
            try Output.stdout("Courier demo — loopback server at \(server.baseURL.absoluteString)\n")
            var tour = DemoTour(server: server)
            try await tour.run()
            try await tour.fleetSteps(database: db ?? ProcessInfo.processInfo.environment["COURIER_POSTGRES_URL"])
            await server.shutdown()
            try Output.stdout("\n\(tour.passed) of \(tour.passed + tour.failed) steps behaved as expected.")
            if tour.failed > 0 { throw ExitCode(1) }
        }
    }
}

/// The steps of the tour, each a small use of the public API.
struct DemoTour {
    let server: TestServer
    var passed = 0
    var failed = 0

    struct Item: Decodable, Sendable {
        var id: Int
        var name: String
    }

    mutating func check(_ title: String, _ body: () async throws -> (Bool, String)) async {
        do {
            let (ok, detail) = try await body()
            print(ok: ok, title, detail)
        } catch {
            print(ok: false, title, "unexpected error: \(error)")
        }
    }

    private mutating func print(ok: Bool, _ title: String, _ detail: String) {
        if ok { passed += 1 } else { failed += 1 }
        // A tour whose output cannot be shown still counts its steps; the summary line reports the failure.
        try? Output.stdout("\(ok ? "✔" : "✘") \(title)\n    \(detail)")
    }

    mutating func run() async throws {
        let server = self.server
        let config = Configuration {
            $0.baseURL = server.baseURL
            $0.defaultHeaders[.authorization] = "Bearer demo-secret"
            $0.defaultParameters = ["device": "linux"]
        }
        try await withSession(config) { session in
            await check("A typed GET decodes JSON") {
                let item = try await session.send(Request<Item>.get("/json")).value
                return (item.name == "courier", "GET /json → Item(id: \(item.id), name: \"\(item.name)\")")
            }
            await check("POST a JSON body, read the echo") {
                let echo = try await session.send(
                    Request<[String: ParameterValue]>.post("/echo", body: .json(["name": "ada", "age": 36]))
                )
                let body = echo.value["body"]?.stringValue ?? ""
                return (
                    body == #"{"age":36,"name":"ada"}"#,
                    "server saw \(body) in \(echo.timing.total.formattedSeconds)"
                )
            }
            await check("Default parameters and headers; the cURL export hides the token") {
                let echo = try await session.send(Request<Data>.get("/echo", query: ["page": 2]))
                let curl = echo.request.curlCommand
                return (!curl.contains("demo-secret") && curl.contains("device=linux"), curl)
            }
            await check("gzip bodies are decoded while streaming") {
                let response = try await session.send(Request<[String: ParameterValue]>.get("/gzip"))
                return (
                    response.value["count"] == 200,
                    "\(response.headers[.contentLength] ?? "?") compressed bytes → \(response.body.count) bytes of JSON"
                )
            }
            await check("Redirects are followed, with a hop limit") {
                let response = try await session.send(Request<Data>.get("/redirect/3"))
                return (response.url.path() == "/redirect/0", "/redirect/3 → \(response.url.path()) after 3 hops")
            }
            await check("Retries with backoff recover from a flaky endpoint") {
                let request = Request<String>.get("/flaky/demo?failures=2").retry(
                    RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(20))
                )
                let response = try await session.send(request)
                return (
                    server.hits("/flaky/demo") == 3,
                    "\"\(response.value)\" — the server was hit \(server.hits("/flaky/demo")) times"
                )
            }
            await check("A stalled server ends in a typed timeout") {
                let error = await Self.failure {
                    _ = try await session.send(Request<Data>.get("/fault/stall").timeout(.milliseconds(300)))
                }
                return (error?.code == .timeout, error.map(String.init(describing:)) ?? "no error")
            }
            await check("Header injection is refused before anything is sent") {
                let before = server.totalHits
                let error = await Self.failure {
                    _ = try await session.send(Request<Data>.get("/echo").header("X-Evil", "a\r\nInjected: 1"))
                }
                return (
                    error?.code == .invalidHeader && server.totalHits == before,
                    error.map(String.init(describing:)) ?? "no error"
                )
            }
            await check("A decompression bomb is stopped while streaming") {
                let error = await Self.failure { _ = try await session.send(Request<Data>.get("/fault/bomb")) }
                return (error?.code == .decompression, error.map(String.init(describing:)) ?? "no error")
            }
            await check("Cancelling the task cancels the request mid-body") {
                let task = Task { try await session.send(Request<Data>.get("/drip?size=1000&chunk=10&interval=50")) }
                try await Task.sleep(for: .milliseconds(200))
                let start = ContinuousClock.now
                task.cancel()
                let result = await task.result
                let elapsed = start.duration(to: .now)
                guard case .failure(let error as CourierError) = result else {
                    return (false, "the request was not cancelled")
                }
                return (
                    error.code == .cancelled,
                    "\(error) \(elapsed.formattedSeconds) after cancel()"
                )
            }
            await check("A batch runs requests together and keeps their order") {
                let paths = ["/delay/120", "/small", "/status/404", "/json"]
                let outcome = try await session.batch(
                    paths.map { Request<Data>.get($0) },
                    options: BatchOptions(concurrency: 4)
                )
                let lines = zip(paths, outcome.results).map { path, result in
                    switch result {
                    case .success(let response): "\(path) → \(response.status.code)"
                    case .failure(let error): "\(path) → \(error.code)"
                    }
                }
                return (outcome.failedIndices == [2], lines.joined(separator: ", "))
            }
            await check("A chain builds each step from the previous answer") {
                let outcome = try await session.chain { chain in
                    let item = try await chain.step("item", Request<Item>.get("/json"))
                    let echo = try await chain.step(
                        "lookup",
                        Request<[String: ParameterValue]>.get("/echo", query: ["name": .string(item.value.name)])
                    )
                    guard case .object(let query)? = echo.value["query"], case .string(let name)? = query["name"] else {
                        return ""
                    }
                    return name
                }
                return (
                    outcome.value == "courier",
                    "steps: \(outcome.steps.map(\.description).joined(separator: "; ")) → \"\(outcome.value)\""
                )
            }
            await check("Identical requests in flight share one call") {
                let before = server.hits("/delay/200")
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<50 { group.addTask { _ = try await session.send(Request<Data>.get("/delay/200")) } }
                    try await group.waitForAll()
                }
                let hits = server.hits("/delay/200") - before
                return (hits == 1, "50 identical GETs at once → \(hits) server hit")
            }
            await check("Server-sent events survive a dropped stream, resuming with Last-Event-ID") {
                var ids: [String] = []
                for try await event in session.events(Request<Data>.get("/events?count=6&drop-after=2&retry=20")) {
                    ids.append(event.id)
                }
                let resumedFrom = server.requests("/events").compactMap { $0.header("Last-Event-ID") }
                return (
                    ids == ["1", "2", "3", "4", "5", "6"],
                    "events \(ids.joined(separator: ", ")) over \(resumedFrom.count + 1) connections; "
                        + "Last-Event-ID sent: \(resumedFrom.joined(separator: ", ")); the server's 204 ended it"
                )
            }
            await check("A rate limit refuses requests sent too fast") {
                await session.updateConfiguration {
                    $0.scheduling.rateLimits = [
                        RateLimitRule(pathPrefix: "/small", limit: .minimumInterval(.seconds(10)), whenLimited: .fail)
                    ]
                }
                defer { Task { await session.updateConfiguration { $0.scheduling.rateLimits = [] } } }
                _ = try await session.send(Request<Data>.get("/small"))
                let error = await Self.failure { _ = try await session.send(Request<Data>.get("/small")) }
                return (
                    error?.code == .tooFrequent,
                    "\(error.map(String.init(describing:)) ?? "no error") — user message: \(error?.userMessage ?? "")"
                )
            }
            await check("A 404 is a typed error with a body preview") {
                let error = await Self.failure { _ = try await session.send(Request<Data>.get("/status/404")) }
                return (
                    error?.status == .notFound,
                    "\(error.map(String.init(describing:)) ?? "no error") — preview: \(error?.bodyPreview ?? "")"
                )
            }
        }
        try await cacheSteps()
        try await downloadSteps()
        try await uploadSteps()
        try await edgeSteps()
    }

    static func failure(_ body: () async throws -> Void) async -> CourierError? {
        do {
            try await body()
            return nil
        } catch { return error as? CourierError }
    }
}
