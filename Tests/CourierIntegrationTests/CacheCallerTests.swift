import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// A cache never answers one caller with what was fetched for another (issue 41).
@Suite("The cache never answers the wrong caller", .timeLimit(.minutes(1)))
struct CacheCallerTests {
    func get(_ session: Session, _ path: String, _ credential: String?) async throws -> Response<CacheAnswer> {
        var headers: HTTPFields = [:]
        if let credential { headers[.authorization] = credential }
        return try await session.send(Request<CacheAnswer>.get(path, headers: headers))
    }

    @Test(arguments: [CachePolicy.cacheElseNetwork(ttl: .seconds(600)), .cacheThenNetwork, .networkElseCache])
    func anAnswerToCredentialsIsNotStoredByTheTimeToLivePolicies(policy: CachePolicy) async throws {
        try await withCachingSession(policy: policy) { session, server in
            let path = "/cache/alice?etag=none&last-modified=none"
            _ = try await get(session, path, "Bearer ALICE")
            let bob = try await get(session, path, "Bearer BOB")
            let anonymous = try await get(session, path, nil)
            #expect(!bob.isFromCache && !anonymous.isFromCache)
            #expect(await session.cache?.statistics().entryCount == 1)  // the anonymous answer alone
        }
    }

    @Test func optedInAnAnswerIsKeyedByTheCredentialAndServedToItAlone() async throws {
        try await withCachingSession(
            policy: .cacheElseNetwork(ttl: .seconds(600)),
            options: CacheOptions(storesAuthorizedResponses: true)
        ) { session, server in
            let path = "/cache/keyed?etag=none&last-modified=none"
            let first = try await get(session, path, "Bearer ALICE")
            let again = try await get(session, path, "Bearer ALICE")
            let bob = try await get(session, path, "Bearer BOB")
            let anonymous = try await get(session, path, nil)
            #expect(!first.isFromCache && again.isFromCache && !bob.isFromCache && !anonymous.isFromCache)
            #expect(server.hits("/cache/keyed") == 3)
            // The key holds a digest of the credential, never the credential.
            let keys = await session.cache?.entries(url: server.url("/cache/keyed")).map(\.key) ?? []
            #expect(keys.count == 3 && keys.allSatisfy { !$0.contains("ALICE") && !$0.contains("BOB") })
        }
    }
}
