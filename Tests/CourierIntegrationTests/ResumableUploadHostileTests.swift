import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Resumable uploads against servers that lie: an upload put on another origin, a success that is not one, and a
/// conflict that never moves. Each answer comes from the loopback server's routes.
@Suite("Resumable uploads against hostile servers", .timeLimit(.minutes(2)))
struct ResumableUploadHostileTests {
    private func makeFile(_ size: Int) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appending(path: "courier-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appending(path: "payload.bin")
        try Data(ServerFiles.bytes(offset: 0, count: size)).write(to: file)
        return file
    }

    /// `/redirect-to` answering the creation with 201 and `location` as the upload's URL.
    private func creation(on server: TestServer, location: String) -> URL {
        var components = URLComponents(url: server.url("/redirect-to"), resolvingAgainstBaseURL: false)!
        components.queryItems = [
            URLQueryItem(name: "status", value: "201"), URLQueryItem(name: "url", value: location),
        ]
        return components.url!
    }

    /// `/response-headers` answering with `status` and `headers`: the upload's URL of a server that says so.
    private func answering(_ status: Int, _ headers: [String: String]) -> String {
        var components = URLComponents()
        components.path = "/response-headers"
        components.queryItems =
            [URLQueryItem(name: "_status", value: String(status))]
            + headers.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
        return components.string!
    }

    /// A `Location` on another origin gets the upload's requests without the session's credentials.
    @Test func credentialsStayOnTheirOrigin() async throws {
        let file = try makeFile(1000)
        try await withTestServer { target in
            try await withTestServer { elsewhere in
                let configuration = Configuration {
                    $0.defaultHeaders[.authorization] = "Bearer secret"
                    $0.defaultHeaders[.cookie] = "session=secret"
                }
                try await withSession(configuration) { session in
                    let upload = session.resumableUpload(
                        file,
                        to: creation(on: target, location: elsewhere.url("/sink").absoluteString),
                        options: ResumableUploadOptions(maxFailuresInARow: 2, retryDelay: .milliseconds(1))
                    )
                    _ = try? await upload.result()  // the other server has no upload: it ends in a failure
                }
                #expect(target.requests("/redirect-to").first?.header("authorization") == "Bearer secret")
                let seen = elsewhere.requests("/sink")
                #expect(!seen.isEmpty)
                #expect(seen.allSatisfy { $0.header("authorization") == nil && $0.header("cookie") == nil })
            }
        }
    }

    /// The session's default parameters do not change the URL the server gave the upload.
    @Test func defaultParametersLeaveTheUploadsURLAlone() async throws {
        let file = try makeFile(1 << 20)
        let server = try await ResumableUploadServer.start()
        do {
            try await withSession(Configuration { $0.defaultParameters = ["key": "k1"] }) { session in
                let upload = session.resumableUpload(file, to: server.url("/uploads/params.bin"))
                let result = try await upload.result()
                #expect(!(result.resource.query ?? "").contains("key"))
            }
            #expect(server.received("/uploads/params.bin")?.length == 1 << 20)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    /// A 2xx that says the upload is incomplete, short of its length, is no success.
    @Test func aSuccessThatSaysIncompleteIsNoFalseFinish() async throws {
        let file = try makeFile(1000)
        try await withServerSession { session, server in
            let location = answering(200, ["Upload-Complete": "?0", "Upload-Offset": "10"])
            let upload = session.resumableUpload(
                file,
                to: creation(on: server, location: location),
                options: ResumableUploadOptions(maxFailuresInARow: 3, retryDelay: .milliseconds(1))
            )
            let error = await courierError { _ = try await upload.result() }
            #expect(error?.code == .invalidResponse, "\(String(describing: error))")
        }
    }

    /// A 409 that repeats the same offset does not make the file go out again and again.
    @Test func aConflictThatNeverMovesIsNotALoop() async throws {
        let file = try makeFile(100_000)
        try await withServerSession { session, server in
            let upload = session.resumableUpload(
                file,
                to: creation(on: server, location: answering(409, ["Upload-Offset": "0"])),
                options: ResumableUploadOptions(maxFailuresInARow: 3, retryDelay: .milliseconds(1))
            )
            _ = await courierError { _ = try await upload.result() }
            #expect(server.requests("/response-headers").filter { $0.method == "PATCH" }.count <= 3)
        }
    }
}
