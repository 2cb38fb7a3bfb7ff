import Courier
import CourierTestSupport
import CourierTesting
import DocExamples
import Foundation
import Testing

/// The first examples a newcomer copies run as written. The README's blocks are whole programs that start the
/// loopback server as their API, so each runs here as it is (`Scripts/doc-examples --packages` also builds and
/// runs them as a new package would, in CI); the last one runs until SIGTERM, so it is only compiled here. The
/// documentation's landing page talks to `https://api.example.com`, bound to the loopback server
/// (`ExampleOrigin`). Every other example in the documents is compiled by every build.
@Suite("The documents' examples run", .timeLimit(.minutes(1)))
struct DocExampleRunTests {
    @Test func theREADMEsBlocksRunAsTheyAre() async throws {
        for run in [runREADME_1, runREADME_2, runREADME_3, runREADME_4, runREADME_5, runREADME_6] {
            try await run()
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
