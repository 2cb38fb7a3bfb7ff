import Courier
import CourierTestSupport
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// The prepared request is what the transport is handed: it carries how it is sent (timeouts, deadline, TLS policy,
/// proxy, HTTP version), chosen when it is prepared and again when its URL changes.
@Suite("The prepared request as the transport sees it", .timeLimit(.minutes(1)))
struct PreparedRequestRouteTests {
    static let pinned = TLSPolicy(allowsInvalidCertificates: true)
    static let proxy = Proxy.http(host: "proxy.example", port: 3128)

    /// A configuration with a TLS policy of its own for `b.example` and a proxy for every host but `a.example`.
    static func configuration(_ configuration: inout Configuration) {
        configuration.baseURL = URL(string: "https://a.example")
        configuration.tls.hosts["b.example"] = pinned
        configuration.proxies = ProxySettings(all: proxy, bypass: ["a.example"])
        configuration.timeouts.connect = .seconds(7)
        configuration.httpVersion = .http1Only
    }

    @Test func itCarriesTheSessionsSettingsForItsURLAndTheCallsDeadline() async throws {
        let stub = StubTransport { _ in .status(.ok) }
        try await withSession(Configuration(Self.configuration), transport: stub) { session in
            let before = ContinuousClock.now
            _ = try await session.send(Request<Data>.get("/x").timeout(.seconds(20)))
            let after = ContinuousClock.now
            let sent = try #require(stub.requests.first)
            #expect(sent.tls == .standard && sent.proxy == nil, "a.example: the default policy, no proxy")
            #expect(sent.timeouts.connect == .seconds(7) && sent.timeouts.total == .seconds(20))
            #expect(sent.httpVersion == .http1Only)
            #expect(sent.deadline >= before + .seconds(20) && sent.deadline <= after + .seconds(20))
        }
    }

    @Test func anAdapterThatChangesTheHostGetsTheNewHostsPolicyAndProxy() async throws {
        let stub = StubTransport { _ in .status(.ok) }
        let configuration = Configuration {
            Self.configuration(&$0)
            $0.adapters = [
                ClosureAdapter { request in
                    var request = request
                    request.url = URL(string: "https://b.example/y")!
                    return request
                }
            ]
        }
        try await withSession(configuration, transport: stub) { session in
            _ = try await session.send(Request<Data>.get("/x"))
        }
        let sent = try #require(stub.requests.first)
        #expect(sent.url.host() == "b.example" && sent.tls == Self.pinned && sent.proxy == Self.proxy)
    }

    @Test func aRedirectToAnotherHostChoosesItsPolicyAndProxyAgain() async throws {
        let stub = StubTransport { request in
            request.url.host() == "a.example"
                ? StubTransport.Answer(status: .found, headers: [.location: "https://b.example/z"])
                : .status(.ok)
        }
        try await withSession(Configuration(Self.configuration), transport: stub) { session in
            _ = try await session.send(Request<Data>.get("/x"))
        }
        let hops = stub.requests
        #expect(hops.map { $0.url.host() } == ["a.example", "b.example"])
        #expect(hops.first?.tls == .standard && hops.first?.proxy == nil)
        #expect(hops.last?.tls == Self.pinned && hops.last?.proxy == Self.proxy)
        #expect(hops.first?.deadline == hops.last?.deadline, "one deadline for the whole call")
    }

    /// Why no step after the preparation checks header values again: a field made from text holds a legal value by
    /// construction (HTTPTypes replaces CR, LF, NUL and other controls), so a credential an authenticator writes
    /// cannot add a header of its own.
    @Test func aCredentialThatWouldSplitAHeaderCannotAddOne() async throws {
        struct Splitting: Authenticator {
            func apply(_ credential: String, to request: inout HTTPRequest) {
                request.headerFields.append(HTTPField(name: .authorization, value: "Bearer \(credential)"))
            }
            func refresh(_ credential: String) async throws -> String { credential }
        }
        let stub = StubTransport { _ in .status(.ok) }
        let configuration = Configuration {
            Self.configuration(&$0)
            $0.authentication = Authentication(Splitting(), credential: "t\r\nX-Injected: 1\u{0}")
        }
        try await withSession(configuration, transport: stub) { session in
            _ = try await session.send(Request<Data>.get("/x"))
        }
        let sent = try #require(stub.requests.first)
        let authorization = try #require(sent.headers[.authorization])
        #expect(!authorization.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
        #expect(sent.headers[HTTPField.Name("X-Injected")!] == nil)
    }
}
