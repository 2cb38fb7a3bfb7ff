import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite("URL facts")
struct URLFactsTests {
    @Test func factsAreTheSchemeAndTheHostAsWrittenLowercased() throws {
        let facts = URLFacts(try #require(URL(string: "HTTPS://API.Example.COM:8443/p?q=1")))
        #expect(facts.isHTTPS)
        #expect(facts.hostKey == "api.example.com")
        let plain = URLFacts(try #require(URL(string: "http://caf%C3%A9.example/x")))
        #expect(!plain.isHTTPS)
        #expect(plain.hostKey == "caf%c3%a9.example")
    }

    @Test func aPreparedRequestDropsItsFactsWhenItsURLChanges() throws {
        let https = try #require(URL(string: "https://a.example/x"))
        var request = PreparedRequest(
            method: .get,
            url: https,
            facts: URLFacts(https),
            headers: [:],
            body: .empty,
            tag: nil,
            userInfo: [:],
            timeouts: Timeouts(),
            deadline: .now,
            tls: .standard,
            proxy: nil,
            httpVersion: .automatic
        )
        #expect(request.knownFacts?.hostKey == "a.example")
        request.headers[.accept] = "text/plain"
        #expect(request.knownFacts?.hostKey == "a.example", "other fields keep them")
        request.url = try #require(URL(string: "http://B.example/y"))
        #expect(request.knownFacts == nil)
        #expect(request.urlFacts.hostKey == "b.example")
        #expect(!request.urlFacts.isHTTPS)
    }

    @Test func itsRouteFollowsItsURLsScheme() throws {
        let https = try #require(URL(string: "https://a.example/x"))
        var request = PreparedRequest(
            method: .get,
            url: https,
            facts: URLFacts(https),
            headers: [:],
            body: .empty,
            tag: nil,
            userInfo: [:],
            timeouts: Timeouts(),
            deadline: Tick.now,
            tls: .standard,
            proxy: nil,
            httpVersion: .automatic
        )
        #expect(request.isHTTPS)
        #expect(ConnectionRouting.plainRoute(for: request) == nil)
        request.url = try #require(URL(string: "http://a.example/x"))
        #expect(!request.isHTTPS)
        #expect(ConnectionRouting.plainRoute(for: request) != nil)
    }
}
