import Courier
import CourierTesting
import CourierTestSupport
import DocExamples
import Foundation
import Testing

/// The README's first example, the one a newcomer copies, runs as written against the loopback server: the
/// documents' `https://api.example.com` is bound to the server (`ExampleOrigin`), whose `/users` and `/slow`
/// routes are the API it talks to. Every other example in the documents is compiled by every build.
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
}
