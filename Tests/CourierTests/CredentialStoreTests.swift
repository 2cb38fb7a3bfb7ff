import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The credential every call of a session shares: one refresh per refused credential, and the fields it puts on
/// a request marked never to be indexed, so no log shows them.
@Suite("Credential store")
struct CredentialStoreTests {
    struct Counting: Authenticator {
        let refreshes = Locked(0)
        func apply(_ credential: Int, to request: inout HTTPRequest) {
            request.headerFields[HTTPField.Name("X-Token")!] = "t\(credential)"
        }
        func refresh(_ credential: Int) async throws -> Int {
            refreshes.withLock { $0 += 1 }
            try await Task.sleep(for: .milliseconds(20))
            return credential + 1
        }
    }

    @Test func aCallRefusedWithAnOlderCredentialGoesOnWithTheCurrentOneWithoutARefresh() async throws {
        let authenticator = Counting()
        let store = CredentialStore(authenticator, credential: 0)
        var request = PreparedRequest(method: .get, url: URL(string: "https://h.example.com/a?b=c")!)
        let old = store.apply(to: &request)
        try await store.refresh(after: old)  // the first refusal of credential 0
        try await store.refresh(after: old)  // a late refusal of the same credential: already replaced
        #expect(authenticator.refreshes.withLock { $0 } == 1)
        var again = PreparedRequest(method: .get, url: URL(string: "https://h.example.com/a?b=c")!)
        #expect(store.apply(to: &again) == old + 1)
        #expect(again.headers[HTTPField.Name("X-Token")!] == "t1")
    }

    @Test func concurrentRefusalsShareOneRefresh() async throws {
        let authenticator = Counting()
        let store = CredentialStore(authenticator, credential: 0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 { group.addTask { try await store.refresh(after: 0) } }
            try await group.waitForAll()
        }
        #expect(authenticator.refreshes.withLock { $0 } == 1)
    }

    @Test func theAppliedFieldsAreNeverIndexedAndAlwaysRedacted() {
        let store = CredentialStore(Counting(), credential: 7)
        var request = PreparedRequest(method: .get, url: URL(string: "https://h.example.com/")!)
        request.headers[.accept] = "text/plain"
        _ = store.apply(to: &request)
        let token = request.headers.first { $0.name.rawName == "X-Token" }
        #expect(token?.indexingStrategy == .disallow)
        #expect(
            request.headers.first { $0.name == .accept }?.indexingStrategy == .automatic,
            "the request's own fields are left as they were"
        )
        #expect(Redactor.standard.redact(request.headers).contains("X-Token: <redacted>"))
        #expect(!request.curlCommand.contains("t7"))
        #expect(Redactor.none.redact(request.headers).contains("X-Token: t7"))
    }
}
