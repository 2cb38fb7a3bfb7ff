import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Resumable uploads against the loopback upload server (``ResumableUploadServer``): cut connections,
/// a restart, a forgotten upload, a changed file, a record left by an upload that stopped, and cancellation.
@Suite("Resumable uploads against the loopback upload server", .timeLimit(.minutes(2)))
struct ResumableUploadTests {
    private func makeFile(_ size: Int) throws -> (URL, String) { try makeUploadFile(size) }

    private func withUploadServer(
        _ configuration: Configuration = Configuration(),
        _ body: (Session, ResumableUploadServer) async throws -> Void
    ) async throws {
        let server = try await ResumableUploadServer.start()
        do {
            try await withSession(configuration) { session in try await body(session, server) }
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    /// Starts an upload of `file` at `bytesPerSecond` and pauses it once `ready` holds, as a process killed then
    /// would leave it: its record stays. The task waiting on it is returned, to cancel at the end.
    private func startThenPause(
        _ session: Session,
        _ file: URL,
        to target: URL,
        bytesPerSecond: Int,
        once what: String,
        _ ready: () -> Bool
    ) async -> Task<Void, Never> {
        let upload = session.resumableUpload(
            file,
            to: target,
            options: ResumableUploadOptions(bytesPerSecond: bytesPerSecond)
        )
        let waiting = Task { _ = try? await upload.result() }
        await eventually(what, ready)
        await upload.pause()
        return waiting
    }

    /// Whether `file` has a record beside it.
    private func hasRecord(_ file: URL) -> Bool {
        FileManager.default.fileExists(atPath: file.path + ".courier-upload")
    }

    /// The offsets the upload said it resumed from, in order.
    private func resumedOffsets(_ events: [ResumableUploadEvent]) -> [Int64] {
        events.compactMap { if case .resumed(let from) = $0 { from } else { nil } }
    }

    private func collect(_ upload: ResumableUpload) -> Task<[ResumableUploadEvent], Never> {
        Task {
            var events: [ResumableUploadEvent] = []
            for await event in upload.events { events.append(event) }
            return events
        }
    }

    @Test func anUploadIsCreatedThenAppendedAndTheServerHasTheFile() async throws {
        let (file, digest) = try makeFile(3 << 20)
        try await withUploadServer { session, server in
            let upload = session.resumableUpload(file, to: server.url("/uploads/a.bin"))
            let events = collect(upload)
            let result = try await upload.result()
            #expect(server.received("/uploads/a.bin") == ReceivedUpload(length: 3 << 20, sha256: digest))
            #expect(result.response?.status == .created && result.bytesSent == 3 << 20)
            #expect(server.requests(.post) == 1 && server.requests(.patch) == 1 && server.requests(.head) == 0)
            #expect(!hasRecord(file))
            let seen = await events.value
            #expect(seen.first == .created(result.resource))
            guard case .progress(let last) = seen.last else {
                Issue.record("the last event is the progress of the last byte: \(seen)")
                return
            }
            #expect(last.completedBytes == 3 << 20 && last.totalBytes == 3 << 20)
        }
    }

    @Test func uploadsOneAfterAnotherThroughOneSessionEachLandWhole() async throws {
        let (file, digest) = try makeFile(64 << 20)
        try await withUploadServer { session, server in
            for index in 0..<3 {
                let path = "/uploads/serial-\(index).bin"
                let result = try await session.resumableUpload(file, to: server.url(path)).result()
                #expect(result.bytesSent == 64 << 20)
                #expect(server.received(path) == ReceivedUpload(length: 64 << 20, sha256: digest))
            }
        }
    }

    @Test func aServerThatStopsReadingIsLeftAfterTheIdleTimeAndTheUploadResumes() async throws {
        let (file, digest) = try makeFile(64 << 20)
        var configuration = Configuration()
        configuration.timeouts.readIdle = .milliseconds(300)
        try await withUploadServer(configuration) { session, server in
            server.stopReading(atBytes: [8 << 20])
            let upload = session.resumableUpload(
                file,
                to: server.url("/uploads/stalled.bin"),
                options: ResumableUploadOptions(retryDelay: .milliseconds(10))
            )
            let events = collect(upload)
            let result = try await upload.result()
            #expect(server.received("/uploads/stalled.bin") == ReceivedUpload(length: 64 << 20, sha256: digest))
            #expect(server.bytesReceived == 64 << 20)  // the append went on from what the server had taken
            #expect(server.requests(.head) == 1 && server.requests(.patch) == 2)
            #expect(result.response?.status == .created)
            let resumed = resumedOffsets(await events.value)
            #expect(resumed.count == 1 && resumed.allSatisfy { $0 >= 8 << 20 })
        }
    }

    @Test func cutConnectionsResumeFromTheServersOffsetAndNoByteIsSentTwice() async throws {
        let (file, digest) = try makeFile(4 << 20)
        try await withUploadServer { session, server in
            server.dropConnections(atBytes: [(1 << 20) + 100, (3 << 20) + 7])
            let upload = session.resumableUpload(
                file,
                to: server.url("/uploads/b.bin"),
                options: ResumableUploadOptions(retryDelay: .milliseconds(10))
            )
            let events = collect(upload)
            let result = try await upload.result()
            #expect(server.received("/uploads/b.bin") == ReceivedUpload(length: 4 << 20, sha256: digest))
            #expect(server.bytesReceived == 4 << 20)  // each append started where the server had got to
            #expect(server.requests(.head) == 2 && server.requests(.patch) == 3)
            #expect(result.response?.status == .created)
            let resumed = resumedOffsets(await events.value)
            #expect(resumed.count == 2 && resumed.allSatisfy { $0 > 0 })
        }
    }

    /// An append whose offset is not the server's gets a 409 while its body is still going out: the body stops
    /// at once (no wait for a timeout). The 409 brings no progress, so the upload waits the backoff, asks the
    /// offset (the server kept the upload, as the draft has it) and appends from there.
    @Test func aConflictAnsweredMidBodyStopsTheBodyAndTheUploadGoesOn() async throws {
        let (file, digest) = try makeFile(2 << 20)
        try await withUploadServer { session, server in
            server.mismatchNextAppend()  // the first append claims offset 1: 409 with the server's 0
            let upload = session.resumableUpload(
                file,
                to: server.url("/uploads/conflict.bin"),
                options: ResumableUploadOptions(retryDelay: .milliseconds(10))
            )
            let events = collect(upload)
            _ = try await upload.result()
            #expect(server.received("/uploads/conflict.bin") == ReceivedUpload(length: 2 << 20, sha256: digest))
            #expect(server.requests(.patch) == 2 && server.requests(.post) == 1 && server.requests(.head) == 1)
            #expect(await !events.value.contains { if case .startedOver = $0 { true } else { false } })
        }
    }

    @Test func aServerRestartKeepsTheOffset() async throws {
        let (file, digest) = try makeFile(3 << 20)
        try await withUploadServer { session, server in
            let upload = session.resumableUpload(
                file,
                to: server.url("/uploads/c.bin"),
                options: ResumableUploadOptions(bytesPerSecond: 4 << 20, retryDelay: .milliseconds(20))
            )
            let result = Task { try await upload.result() }
            await eventually("a megabyte is in") { server.bytesReceived >= 1 << 20 }
            try await server.restart()
            _ = try await result.value
            #expect(server.received("/uploads/c.bin") == ReceivedUpload(length: 3 << 20, sha256: digest))
            #expect(server.bytesReceived == 3 << 20 && server.requests(.head) >= 1)
        }
    }

    @Test func aRecordLetsAnotherUploadGoOnAndAChangedFileOrForgottenUploadStartsOver() async throws {
        let (file, digest) = try makeFile(3 << 20)
        try await withUploadServer { session, server in
            let target = server.url("/uploads/d.bin")
            // The first upload stops (as a killed process would) once a megabyte is in; its record stays.
            let abandoned = await startThenPause(
                session,
                file,
                to: target,
                bytesPerSecond: 4 << 20,
                once: "1 MiB is in"
            ) {
                server.bytesReceived >= 1 << 20
            }
            let record = try Data(contentsOf: URL(filePath: file.path + ".courier-upload"))
            #expect(String(decoding: record.prefix(17), as: UTF8.self) == "courier-upload 1 ")

            let second = session.resumableUpload(file, to: target)
            let events = collect(second)
            _ = try await second.result()
            #expect(server.received("/uploads/d.bin") == ReceivedUpload(length: 3 << 20, sha256: digest))
            #expect(server.bytesReceived == 3 << 20 && server.requests(.post) == 1)
            let resumed = resumedOffsets(await events.value)
            #expect(resumed.count == 1 && resumed[0] >= 1 << 20)
            abandoned.cancel()

            // A record of a file that has changed since: sent whole, with a word on why.
            let stopped = await startThenPause(
                session,
                file,
                to: server.url("/uploads/e.bin"),
                bytesPerSecond: 4 << 20,
                once: "the upload is created and recorded"
            ) { hasRecord(file) }
            let handle = try FileHandle(forWritingTo: file)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data("more".utf8))
            try handle.close()
            let fourth = session.resumableUpload(file, to: server.url("/uploads/e.bin"))
            let changed = collect(fourth)
            _ = try await fourth.result()
            let whole = try #require(server.received("/uploads/e.bin"))
            #expect(whole.length == Int64(3 << 20) + 4)
            #expect(
                await changed.value.contains {
                    if case .startedOver(let reason) = $0 { reason.contains("changed") } else { false }
                }
            )
            stopped.cancel()
        }
    }

    @Test func anUploadTheServerForgotStartsOver() async throws {
        let (file, digest) = try makeFile(1 << 20)
        try await withUploadServer { session, server in
            let target = server.url("/uploads/f.bin")
            let abandoned = await startThenPause(
                session,
                file,
                to: target,
                bytesPerSecond: 1 << 20,
                once: "the upload is created and recorded"
            ) { hasRecord(file) }
            server.forgetUploads()  // expired, or lost: the next question about it gets a 404
            let second = session.resumableUpload(file, to: target)
            let events = collect(second)
            _ = try await second.result()
            #expect(server.received("/uploads/f.bin") == ReceivedUpload(length: 1 << 20, sha256: digest))
            let seen = await events.value
            #expect(server.requests(.post) == 2)
            #expect(seen.contains { if case .startedOver = $0 { true } else { false } }, "\(seen)")
            abandoned.cancel()
        }
    }

    @Test func aPausedUploadSendsNothingUntilResumed() async throws {
        let (file, digest) = try makeFile(3 << 20)
        try await withUploadServer { session, server in
            let upload = session.resumableUpload(
                file,
                to: server.url("/uploads/h.bin"),
                options: ResumableUploadOptions(bytesPerSecond: 4 << 20)
            )
            let result = Task { try await upload.result() }
            await eventually("a megabyte is in") { server.bytesReceived >= 1 << 20 }
            await upload.pause()
            try await Task.sleep(for: .milliseconds(100))
            let held = server.bytesReceived
            try await Task.sleep(for: .milliseconds(300))
            #expect(server.bytesReceived == held && held < 3 << 20)
            await upload.resume()
            _ = try await result.value
            #expect(server.received("/uploads/h.bin") == ReceivedUpload(length: 3 << 20, sha256: digest))
            #expect(server.bytesReceived == 3 << 20)
        }
    }

    @Test func cancellingTheWaitingTaskKeepsTheRecordToResumeLater() async throws {
        let (file, digest) = try makeFile(2 << 20)
        try await withUploadServer { session, server in
            let target = server.url("/uploads/i.bin")
            let first = session.resumableUpload(
                file,
                to: target,
                options: ResumableUploadOptions(bytesPerSecond: 2 << 20)
            )
            let waiting = Task { try await first.result() }
            await eventually("bytes are going in") { server.bytesReceived > 0 }
            waiting.cancel()
            let error = await courierError { _ = try await waiting.value }
            #expect(error?.code == .cancelled && server.requests(.delete) == 0)
            #expect(hasRecord(file))
            _ = try await session.resumableUpload(file, to: target).result()
            #expect(server.received("/uploads/i.bin") == ReceivedUpload(length: 2 << 20, sha256: digest))
            #expect(server.requests(.post) == 1)
        }
    }

    @Test func cancellingStopsTheUploadAndTellsTheServer() async throws {
        let (file, _) = try makeFile(3 << 20)
        try await withUploadServer { session, server in
            let upload = session.resumableUpload(
                file,
                to: server.url("/uploads/g.bin"),
                options: ResumableUploadOptions(bytesPerSecond: 2 << 20)
            )
            let result = Task { try await upload.result() }
            await eventually("bytes are going in") { server.bytesReceived > 0 }
            #expect(await session.pool.snapshot().contains { $0.tag == upload.tag })  // visible in the pool
            await upload.cancel()
            let error = await courierError { _ = try await result.value }
            #expect(error?.code == .cancelled)
            await eventually("the server is told") { server.requests(.delete) == 1 }
            #expect(server.received("/uploads/g.bin") == nil)
            #expect(!hasRecord(file))
        }
    }
}

/// A file of `size` deterministic bytes in a folder of its own, and its SHA-256: what the resumable-upload tests
/// send, against the loopback server and against SwiftNIO's.
func makeUploadFile(_ size: Int) throws -> (URL, String) {
    let folder = FileManager.default.temporaryDirectory.appending(path: "courier-resumable-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let data = Data(ServerFiles.bytes(offset: 0, count: size))
    let file = folder.appending(path: "payload.bin")
    try data.write(to: file)
    return (file, sha256Hex(data))
}
