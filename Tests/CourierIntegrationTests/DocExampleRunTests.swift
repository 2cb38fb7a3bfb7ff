import Courier
import CourierTestSupport
import CourierTesting
import DocExamples
import Foundation
import Testing

/// The first examples a newcomer copies (the README's and the documentation's landing page's) run as written
/// against the loopback server: the documents' `https://api.example.com` is bound to the server
/// (`ExampleOrigin`), whose `/users` and `/slow` routes are the API they talk to. Every other example in the
/// documents is compiled by every build; the README's second block is a tour of snippets over names it does not
/// declare (a session, ids, files), so it is compiled, not run.
@Suite("The documents' examples run", .timeLimit(.minutes(1)))
struct DocExampleRunTests {
    @Test func theREADMEsFirstExampleRunsAgainstTheLoopbackServer() async throws {
        try await withTestServer { server in
            try await ExampleOrigin.$current.withValue(server.baseURL.absoluteString) {
                try await runREADME_1()
            }
            // What the example did, seen from the server: the user read, renamed, and the slow call timed out
            // (the example catches that timeout, so its leaving is the server's abort).
            #expect(server.hits("/v2/users/42") == 2)
            #expect(server.hits("/v2/slow") == 1)
            await eventually("the slow call was given up") { server.aborts("/v2/slow") == 1 }
        }
    }

    @Test func theDocumentationsFirstExampleRunsAgainstTheLoopbackServer() async throws {
        try await withTestServer { server in
            try await ExampleOrigin.$current.withValue(server.baseURL.absoluteString) {
                try await runSources_Courier_Courier_docc_Courier_1()
            }
            #expect(server.hits("/users/42") == 1)
        }
    }
}
