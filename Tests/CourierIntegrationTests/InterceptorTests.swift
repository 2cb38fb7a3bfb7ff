import Courier
import CourierTestSupport
import CourierTesting
import Crypto
import Foundation
import HTTPTypes
import Testing

/// Records the order of monitor calls.
final class RecordingMonitor: EventMonitor {
    private let events = Locked<[String]>([])
    var all: [String] { events.withLock { $0 } }
    private func add(_ event: String) { events.withLock { $0.append(event) } }

    func willSend(_ request: PreparedRequest) { add("willSend \(request.url.path())") }
    func didSend(_ request: PreparedRequest) { add("didSend") }
    func didReceive(_ response: ResponseBody, for request: PreparedRequest) {
        add("didReceive \(response.status.code)")
    }
    func willRetry(_ request: PreparedRequest, attempt: Int, delay: Duration, error: CourierError) {
        add("willRetry \(attempt)")
    }
    func willCancel(_ request: PreparedRequest) { add("willCancel") }
    func didComplete(_ request: PreparedRequest, result: Result<ResponseBody, CourierError>, timing: Timing) {
        switch result {
        case .success: add("didComplete ok")
        case .failure(let error): add("didComplete \(error.code)")
        }
    }
}

/// Records an accessory's calls into the same list as a ``RecordingMonitor``'s.
struct RecordingAccessory: RequestAccessory {
    let name: String
    let events: Locked<[String]>

    func requestWillStart(_ request: PreparedRequest) {
        events.withLock { $0.append("\(name) willStart \(request.url.path())") }
    }
    func requestWillStop(_ request: PreparedRequest, outcome: Result<ResponseBody, CourierError>) {
        events.withLock { $0.append("\(name) willStop \(Self.describe(outcome))") }
    }
    func requestDidStop(_ request: PreparedRequest, outcome: Result<ResponseBody, CourierError>) {
        events.withLock { $0.append("\(name) didStop \(Self.describe(outcome))") }
    }

    static func describe(_ outcome: Result<ResponseBody, CourierError>) -> String {
        switch outcome {
        case .success(let body): "\(body.status.code) \(body.data.count) bytes"
        case .failure(let error): "\(error.code)"
        }
    }
}

/// A monitor that writes into a shared list, so its calls interleave with accessories'.
struct SharedListMonitor: EventMonitor {
    let events: Locked<[String]>
    func willSend(_ request: PreparedRequest) { events.withLock { $0.append("monitor willSend") } }
    func willRetry(_ request: PreparedRequest, attempt: Int, delay: Duration, error: CourierError) {
        events.withLock { $0.append("monitor willRetry") }
    }
    func didFinish(with message: DebugMessage) { events.withLock { $0.append("monitor didFinish") } }
}

@Suite("Interceptors", .timeLimit(.minutes(1)))
struct InterceptorTests {
    @Test func adaptersRewriteAddAndSign() async throws {
        let secret = Data("s3cret".utf8)
        let signer = HMACSigningAdapter(secret: secret, clock: { Date(timeIntervalSince1970: 1_700_000_000) })
        try await withServerSession({
            $0.adapters = [
                URLRewriteAdapter { url in
                    URL(string: url.absoluteString.replacingOccurrences(of: "/old/", with: "/")) ?? url
                },
                QueryParametersAdapter(["device": "linux"]),
                HeaderAdapter(HTTPField.Name("X-Token")!) { "fresh-token" },
                signer,
            ]
        }) { session, _ in
            let echo = try await session.send(Request<Echo>.post("/old/echo", body: .text("payload"))).value
            #expect(echo.path == "/echo")
            #expect(echo.query["device"] == "linux")
            #expect(echo.header("x-token") == "fresh-token")
            #expect(echo.header("x-timestamp") == "1700000000")
            let bodyHash = SHA256.hash(data: Data("payload".utf8)).map { String(format: "%02x", $0) }.joined()
            let expected = signer.signature(
                method: "POST",
                pathAndQuery: echo.uri,
                timestamp: "1700000000",
                bodyHash: bodyHash
            )
            #expect(echo.header("x-signature") == expected)
        }
    }

    /// Encrypts a request's body with AES-GCM under a key the server shares (XZNetworking's encryption hook):
    /// the body on the wire is the sealed box, its type and length follow it.
    struct EncryptingAdapter: RequestAdapter {
        let key: SymmetricKey
        func adapt(_ request: PreparedRequest) async throws -> PreparedRequest {
            guard let plain = request.body.data, !plain.isEmpty else { return request }
            let sealed = try AES.GCM.seal(plain, using: key)
            var encrypted = request
            encrypted.body = .bytes(try #require(sealed.combined))
            encrypted.headers[.contentType] = "application/octet-stream"
            encrypted.headers[HTTPField.Name("X-Encryption")!] = "aes-256-gcm"
            return encrypted
        }
    }

    /// The server opens what it received with the shared key and finds the JSON the caller wrote; the signature
    /// added after it covers the encrypted bytes; a retried request sends them again, whole.
    @Test func anAdapterThatEncryptsTheBodyIsWhatTheServerReceivesAndRetries() async throws {
        let key = SymmetricKey(size: .bits256)
        let secret = Data("s3cret".utf8)
        let signer = HMACSigningAdapter(secret: secret, clock: { Date(timeIntervalSince1970: 1_700_000_000) })
        try await withServerSession({
            $0.adapters = [EncryptingAdapter(key: key), signer]
            $0.retryPolicy = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1))
        }) { session, server in
            let answer = try await session.send(
                Request<String>.put("/flaky/encrypted?failures=1", body: .json(["card": "4111 1111 1111 1111"]))
            )
            #expect(answer.value == "ok after 1 failures")
            let received = server.requests("/flaky/encrypted")
            #expect(received.count == 2)
            for request in received {
                let opened = try AES.GCM.open(AES.GCM.SealedBox(combined: Data(request.body)), using: key)
                let json = try JSONDecoder().decode([String: String].self, from: opened)
                #expect(json == ["card": "4111 1111 1111 1111"], "the server decrypts the JSON the caller wrote")
                #expect(!request.bodyText.contains("4111"), "no plaintext on the wire")
                #expect(request.header("Content-Length") == String(request.body.count))
                #expect(request.header("Content-Type") == "application/octet-stream")
                #expect(request.header("X-Encryption") == "aes-256-gcm")
                let bodyHash = SHA256.hash(data: Data(request.body)).map { String(format: "%02x", $0) }.joined()
                let signature = signer.signature(
                    method: "PUT",
                    pathAndQuery: request.uri,
                    timestamp: "1700000000",
                    bodyHash: bodyHash
                )
                #expect(request.header("X-Signature") == signature, "signed over the encrypted bytes")
            }
        }
    }

    @Test func anAdapterThatThrowsStopsTheRequestBeforeSending() async throws {
        struct Refusal: Error {}
        try await withServerSession({ $0.adapters = [ClosureAdapter { _ in throw Refusal() }] }) { session, server in
            let error = await courierError { _ = try await session.send(Request<Data>.get("/echo")) }
            #expect(error?.code == .encoding)
            #expect(server.totalHits == 0)
        }
    }

    @Test func businessValidationRejectsAndIgnores() async throws {
        let validator = BusinessCodeValidator { json in
            json["name"]?.stringValue == "courier"
                ? .reject(CourierError.validation("business code", keyPath: "name")) : .accept
        }
        try await withServerSession { session, _ in
            let rejected = await courierError {
                _ = try await session.send(Request<Data>.get("/json").validate(validator))
            }
            #expect(rejected?.code == .validation && rejected?.keyPath == "name")
            let ignored = await courierError {
                _ = try await session.send(Request<Data>.get("/json").validate(ClosureValidator { _, _ in .ignore }))
            }
            #expect(ignored?.code == .ignored)
            let shape = await courierError {
                _ = try await session.send(Request<Data>.get("/json").validate(JSONShapeValidator(["id": .string])))
            }
            #expect(shape?.keyPath == "id")
        }
    }

    @Test func statusErrorsCarryAPreview() async throws {
        try await withServerSession { session, _ in
            let error = await courierError { _ = try await session.send(Request<Data>.get("/status/404")) }
            #expect(error?.code == .httpStatus)
            #expect(error?.status == .notFound)
            #expect(error?.bodyPreview == "status 404")
        }
    }

    @Test func monitorsSeeEveryStepInOrder() async throws {
        let monitor = RecordingMonitor()
        try await withServerSession({
            $0.monitors = [monitor]
            $0.retryPolicy = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1))
        }) { session, _ in
            _ = try await session.send(Request<Data>.get("/small"))
            _ = await courierError { _ = try await session.send(Request<Data>.get("/status/500")) }
        }
        #expect(
            monitor.all == [
                "willSend /small", "didSend", "didReceive 200", "didComplete ok",
                "willSend /status/500", "didSend", "didReceive 500", "willRetry 1",
                "willSend /status/500", "didSend", "didReceive 500", "didComplete httpStatus",
            ]
        )
    }

    /// A request's own monitors (HLNetworking's debug block per API) hear every step of that request's call, after
    /// the session's, down to its debug message, and nothing of the requests beside it; on a stream as on a send.
    @Test func aRequestsOwnMonitorsHearItsCallAlone() async throws {
        let session = RecordingMonitor()
        let own = RecordingMonitor()
        let order = Locked<[String]>([])
        let messages = Locked<[DebugMessage]>([])
        struct Finish: EventMonitor {
            let name: String
            let order: Locked<[String]>
            let messages: Locked<[DebugMessage]>?
            func didFinish(with message: DebugMessage) {
                order.withLock { $0.append(name) }
                messages?.withLock { $0.append(message) }
            }
        }
        try await withServerSession({
            $0.monitors = [session, Finish(name: "session", order: order, messages: nil)]
            $0.retryPolicy = RetryPolicy(maxAttempts: 2, baseDelay: .milliseconds(1))
        }) { client, _ in
            _ = try await client.send(Request<Data>.get("/small"))
            var watched = Request<Data>.get("/redirect/1")
            watched.monitors = [own, Finish(name: "own", order: order, messages: messages)]
            _ = try await client.send(watched)
            _ = await courierError { _ = try await client.send(Request<Data>.get("/status/500")) }
            var streamed = Request<Data>.get("/small")
            streamed.monitors = [own]
            let response = try await client.stream(streamed)
            for try await _ in response.body {}
        }
        #expect(
            own.all == [
                "willSend /redirect/1", "didSend", "willSend /redirect/0", "didSend", "didReceive 200",
                "didComplete ok",
                "willSend /small", "didSend", "didComplete ok",
            ],
            "\(own.all)"
        )
        #expect(
            Array(session.all.suffix(3)) == Array(own.all.suffix(3)),
            "a stream's steps, as the session's hear them"
        )
        #expect(session.all.filter { $0.hasPrefix("willSend") }.count == 6, "the session's monitors hear every call")
        #expect(order.withLock { $0 } == ["session", "session", "own", "session", "session"])
        let message = try #require(messages.withLock { $0.first })
        #expect(message.originalRequest.url.path() == "/redirect/1" && message.redirects.count == 1)
        #expect(message.response?.status.code == 200)
    }

    @Test func accessoriesHearStartAndStopOncePerRequestInOrder() async throws {
        let events = Locked<[String]>([])
        try await withServerSession({
            $0.monitors = [SharedListMonitor(events: events)]
            $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(1))
        }) { session, _ in
            let request = Request<Data>.get("/flaky/accessory", query: ["failures": "1"])
                .accessory(RecordingAccessory(name: "a", events: events))
                .accessory(RecordingAccessory(name: "b", events: events))
            _ = try await session.send(request)
            #expect(
                events.withLock { $0 } == [
                    "a willStart /flaky/accessory", "b willStart /flaky/accessory",
                    "monitor willSend", "monitor willRetry", "monitor willSend", "monitor didFinish",
                    "a willStop 200 19 bytes", "b willStop 200 19 bytes", "a didStop 200 19 bytes",
                    "b didStop 200 19 bytes",
                ]
            )

            events.withLock { $0 = [] }
            let undecodable = Request<Echo>.get("/small").accessory(RecordingAccessory(name: "a", events: events))
            _ = await courierError { _ = try await session.send(undecodable) }
            #expect(
                events.withLock { $0 } == [
                    "a willStart /small", "monitor willSend", "monitor didFinish", "a willStop decoding",
                    "a didStop decoding",
                ]
            )

            events.withLock { $0 = [] }
            let unpreparable = Request<Data>.get("http://[::1").accessory(RecordingAccessory(name: "a", events: events))
            _ = await courierError { _ = try await session.send(unpreparable) }
            #expect(events.withLock { $0 }.isEmpty, "a request that never starts tells its accessories nothing")
        }
    }

    @Test func monitorsHearOfCancellation() async throws {
        let monitor = RecordingMonitor()
        try await withServerSession({ $0.monitors = [monitor] }) { session, _ in
            let task = Task { try await session.send(Request<Data>.get("/delay/5000")) }
            try await Task.sleep(for: .milliseconds(200))
            task.cancel()
            _ = await task.result
        }
        #expect(monitor.all.suffix(2) == ["willCancel", "didComplete cancelled"])
    }
}
