import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import NIOCore
import Testing

/// Credential refresh on the call pipeline, against the test server's expiring bearer token (`/auth/…`).
@Suite("Authentication: one refresh for many refused calls", .timeLimit(.minutes(1)))
struct AuthenticationTests {
    /// Runs `body` with a session signed by a ``LateTokenAuthenticator`` that starts from `credential`.
    func withAuthenticatedSession(
        credential: String = "expired",
        failure: (any Error)? = nil,
        _ configure: @escaping @Sendable (inout Configuration) -> Void = { _ in },
        _ body: (Session, TestServer, Locked<Int>) async throws -> Void
    ) async throws {
        let refreshes = Locked(0)
        let holder = SessionHolder()
        try await withServerSession({ configuration in
            configure(&configuration)
            configuration.authentication = Authentication(
                LateTokenAuthenticator(holder: holder, refreshes: refreshes, failure: failure),
                credential: credential
            )
        }) { session, server in
            holder.session.withLock { $0 = session }
            try await body(session, server, refreshes)
        }
    }

    @Test func fiftyCallsRefusedTogetherWaitForOneRefreshAndAllSucceed() async throws {
        try await withAuthenticatedSession { session, server, refreshes in
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        try await session.send(Request<String>.get("/auth/resource", query: ["n": .int(index)])).value
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == 50 && answers.allSatisfy { $0 == "ok" })
            #expect(refreshes.withLock { $0 } == 1)
            #expect(server.hits("/auth/refresh") == 1)
            await eventually("the pool empties") { await session.pool.isEmpty }
        }
    }

    @Test func aRefreshThatThrowsFailsTheWaitingCallsWithItsCause() async throws {
        struct RefreshRefused: Error {}
        try await withAuthenticatedSession(failure: RefreshRefused()) { session, _, refreshes in
            let errors = await withTaskGroup(of: CourierError?.self) { group in
                for index in 0..<5 {
                    group.addTask {
                        await courierError {
                            _ = try await session.send(Request<String>.get("/auth/resource", query: ["n": .int(index)]))
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(errors.allSatisfy { $0?.code == .authenticationFailed && $0?.underlying is RefreshRefused })
            #expect(refreshes.withLock { $0 } >= 1)
        }
    }

    @Test func freshCredentialsRefusedAgainAndAgainStopWithoutALoop() async throws {
        try await withAuthenticatedSession { session, server, refreshes in
            let error = await courierError { _ = try await session.send(Request<String>.get("/auth/refuse-all")) }
            #expect(error?.code == .authenticationFailed)
            #expect(server.hits("/auth/refuse-all") == 3, "the first credential and two fresh ones")
            #expect(refreshes.withLock { $0 } == 2)
        }
    }

    @Test func aRequestThatOptsOutIsSentWithoutTheCredential() async throws {
        try await withAuthenticatedSession(credential: "token-0") { session, _, _ in
            let signed = try await session.send(Request<String>.get("/auth/resource"))
            #expect(signed.value == "ok")
            let error = await courierError {
                _ = try await session.send(Request<String>.get("/auth/resource").authentication(nil))
            }
            #expect(error?.status?.code == 401, "no credential, no refresh: the 401 goes to validation")
        }
    }

    /// The credential goes on after the key identical calls share by is made, so a request signed otherwise must
    /// make a call of its own: it never receives an answer another credential earned.
    @Test func aRequestSignedOtherwiseNeverSharesASignedCall() async throws {
        try await withAuthenticatedSession(credential: "token-0") { session, server, _ in
            async let signed = session.send(Request<Data>.get("/delay/300"))
            async let unsigned = session.send(Request<Data>.get("/delay/300").authentication(nil))
            _ = try await (signed, unsigned)
            #expect(server.hits("/delay/300") == 2)
        }
    }

    @Test func anUploadWhoseBodyCannotBeSentAgainSaysSo() async throws {
        try await withAuthenticatedSession { session, _, refreshes in
            let stream = ByteStream(chunks: [ByteBuffer(string: "part one, "), ByteBuffer(string: "part two")])
            let upload = try session.upload(Request<Data>.post("/auth/resource", body: .stream(stream, length: nil)))
            let error = await courierError { _ = try await upload.response }
            #expect(error?.code == .authenticationFailed)
            #expect(error?.message.contains("cannot be sent again") == true)
            #expect(refreshes.withLock { $0 } == 0)
        }
    }

    /// A token that runs out mid-download: the resumed request is refused, the credential is refreshed, and the
    /// download goes on from the byte it reached.
    @Test func aDownloadRefusedMidwayRefreshesAndResumesFromItsByte() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withAuthenticatedSession(credential: "token-0") { session, server, refreshes in
            let size = 300_000
            let manager = try DownloadManager(session: session)
            let target = directory.appendingPathComponent("signed.bin")
            let url = server.url("/file/\(size)?auth&cut=100000&faults=1&expire-on-cut&key=signed")
            let download = try await manager.add(
                url,
                to: .file(target),
                options: DownloadOptions(
                    checksum: try .sha256(ServerFiles.sha256(count: size)),
                    retries: 2,
                    retryDelay: .milliseconds(10)
                )
            )
            _ = try await download.completion()
            #expect(refreshes.withLock { $0 } == 1)
            #expect(server.counter("file-bytes:signed") == size, "the bytes before the refusal were not fetched again")
        }
    }

    /// A call cancelled while it waits for a refresh leaves at once; the refresh goes on for the others and ends
    /// later (here when the test lets it).
    @Test func aCallCancelledDuringARefreshLeavesWhileTheRefreshGoesOn() async throws {
        let release = AsyncStream<Void>.makeStream()
        let (refreshStarted, refreshEnded) = (Locked(false), Locked(false))
        try await withServerSession({
            let authenticator = HeldRefreshAuthenticator(
                release: release.stream,
                started: refreshStarted,
                ended: refreshEnded
            )
            $0.authentication = Authentication(authenticator, credential: "expired")
        }) { session, _ in
            let call = Task { await courierError { _ = try await session.send(Request<String>.get("/auth/resource")) } }
            await eventually("the call waits for the refresh") { refreshStarted.withLock { $0 } }
            call.cancel()
            let error = await call.value
            #expect(error?.code == .cancelled)
            #expect(refreshEnded.withLock { $0 } == false, "the call left before the refresh ended")
            release.continuation.finish()
            await eventually("the refresh ends on its own") { refreshEnded.withLock { $0 } }
            await eventually("the pool empties") { await session.pool.isEmpty }
        }
    }

    /// An upload refused for its credential is refreshed and sent again with its whole body, as a send is.
    @Test func anUploadRefusedWith401IsRefreshedAndSentAgainWhole() async throws {
        let directory = try temporaryDownloadDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("upload.bin")
        try ServerFiles.data(count: 200_000).write(to: file)
        try await withAuthenticatedSession { session, server, refreshes in
            let upload = try session.upload(Request<String>.put("/auth/resource", body: .file(file)))
            #expect(try await upload.response.value == "ok")
            #expect(refreshes.withLock { $0 } == 1)
            #expect(server.requests("/auth/resource").map(\.bodyLength) == [200_000, 200_000])
        }
    }

    @Test func theCredentialNeverReachesTheLogOrACurlExport() async throws {
        let logs = CapturedLogs()
        try await withAuthenticatedSession({
            $0.logger = logs.logger()
            $0.debugLogging = true
        }) { session, _, _ in
            let response = try await session.send(Request<String>.get("/auth/resource"))
            #expect(response.value == "ok")
            let curl = response.request.curlCommand
            #expect(!curl.contains("token-1") && curl.contains("X-Session-Key: <redacted>"), "\(curl)")
        }
        #expect(logs.all.contains("→ GET"))
        #expect(!logs.all.contains("token-1") && !logs.all.contains("key-of-"), "\(logs.all)")
    }
}

/// The session a ``LateTokenAuthenticator`` refreshes through, set once the session exists.
final class SessionHolder: Sendable {
    let session = Locked<Session?>(nil)
}

/// Signs with a bearer token and an `X-Session-Key` (a name no redactor knows), and refreshes through
/// `/auth/refresh` on the session it signs, opted out of the authentication, as a real client does; that session
/// is known only after the configuration is made.
struct LateTokenAuthenticator: Authenticator {
    let holder: SessionHolder
    let refreshes: Locked<Int>
    let failure: (any Error)?

    func apply(_ credential: String, to request: inout HTTPRequest) {
        request.headerFields[.authorization] = "Bearer \(credential)"
        request.headerFields[HTTPField.Name("X-Session-Key")!] = "key-of-\(credential)"
    }

    func refresh(_ credential: String) async throws -> String {
        refreshes.withLock { $0 += 1 }
        if let failure { throw failure }
        guard let session = holder.session.withLock({ $0 }) else {
            throw CourierError(code: .invalidState, message: "no session yet")
        }
        struct Token: Decodable { var access_token: String }
        return try await session.send(Request<Token>.post("/auth/refresh").authentication(nil)).value.access_token
    }
}

/// Refreshes only when the test lets it (its `release` stream ends), to hold calls in the wait for a refresh.
struct HeldRefreshAuthenticator: Authenticator {
    let release: AsyncStream<Void>
    let started: Locked<Bool>
    let ended: Locked<Bool>

    func apply(_ credential: String, to request: inout HTTPRequest) {
        request.headerFields[.authorization] = "Bearer \(credential)"
    }

    func refresh(_ credential: String) async throws -> String {
        started.withLock { $0 = true }
        for await _ in release {}
        ended.withLock { $0 = true }
        return "token-1"
    }
}
