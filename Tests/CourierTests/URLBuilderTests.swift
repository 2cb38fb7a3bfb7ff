import Foundation
import Testing

@testable import Courier

@Suite("URL building")
struct URLBuilderTests {
    let configuration = Configuration {
        $0.baseURL = URL(string: "https://api.example.com/base/")
        $0.cdnURL = URL(string: "https://cdn.example.com")
        $0.services["pay"] = URL(string: "https://pay.example.com/api")
    }

    func resolve(_ path: String, _ bases: URLBuilder.Bases = .init()) throws -> String {
        try URLBuilder.resolve(path: path, bases: bases, configuration: configuration).absoluteString
    }

    @Test func relativePathJoinsTheGlobalBase() throws {
        #expect(try resolve("/users/1") == "https://api.example.com/base/users/1")
        #expect(try resolve("users/1") == "https://api.example.com/base/users/1")
    }

    @Test func priorityIsAbsoluteThenRequestBaseThenServiceThenGlobal() throws {
        #expect(
            try resolve("https://other.example.com/x", .init(requestBase: URL(string: "https://r.example.com")))
                == "https://other.example.com/x"
        )
        #expect(
            try resolve("/x", .init(requestBase: URL(string: "https://r.example.com"), service: "pay"))
                == "https://r.example.com/x"
        )
        #expect(try resolve("/x", .init(service: "pay")) == "https://pay.example.com/api/x")
        #expect(try resolve("/x", .init(usesCDN: true)) == "https://cdn.example.com/x")
    }

    @Test func apiVersionSitsBetweenBaseAndPath() throws {
        var config = configuration
        config.apiVersion = "v2"
        #expect(
            try URLBuilder.resolve(path: "/users", bases: .init(), configuration: config).absoluteString
                == "https://api.example.com/base/v2/users"
        )
        #expect(
            try URLBuilder.resolve(path: "/users", bases: .init(apiVersion: ""), configuration: config).absoluteString
                == "https://api.example.com/base/users"
        )
    }

    @Test func ignoringTheBaseNeedsAnAbsoluteURL() throws {
        let error = #expect(throws: CourierError.self) { try resolve("/x", .init(ignoresBase: true)) }
        #expect(error?.code == .invalidURL)
        #expect(try resolve("http://h.example.com/y", .init(ignoresBase: true)) == "http://h.example.com/y")
    }

    @Test func unknownServiceAndMissingBaseAreClearErrors() throws {
        let unknown = #expect(throws: CourierError.self) { try resolve("/x", .init(service: "nope")) }
        #expect(unknown?.message.contains("nope") == true)
        let noBase = #expect(throws: CourierError.self) {
            try URLBuilder.resolve(path: "/x", bases: .init(), configuration: Configuration())
        }
        #expect(noBase?.code == .invalidURL)
    }

    @Test(arguments: ["/a b", "/a\r\nHost: evil", "/nul\u{0}", "ht!tp://x", "ftp://example.com/file", "http://"])
    func malformedURLsAreRejectedWithTheOffendingString(_ bad: String) throws {
        let error = #expect(throws: CourierError.self) { try resolve(bad, .init(ignoresBase: true)) }
        #expect(error?.code == .invalidURL)
        #expect(error?.message.contains("\"") == true)
    }

    @Test func queryParametersAreAppendedSorted() {
        let url = URLBuilder.appending(["b": 2, "a": "x y"], to: URL(string: "https://h.example.com/p?z=1")!)
        #expect(url.absoluteString == "https://h.example.com/p?z=1&a=x%20y&b=2")
        let kept = URLBuilder.appending(
            ["z": 9, "c": 3],
            to: URL(string: "https://h.example.com/p?z=1")!,
            overwrite: false
        )
        #expect(kept.absoluteString == "https://h.example.com/p?z=1&c=3")
    }

    @Test func resolvedURLsAnswerAsTheBuilderDoesAndStayBounded() throws {
        let state = SessionState(configuration)
        func resolve(_ path: String) throws -> ResolvedURL {
            let (snapshot, known) = try state.current(resolving: path)
            return try RequestPreparation(snapshot: snapshot, start: .now, state: state, known: known).resolve(path)
        }
        for path in ["/users/1", "users/1", "https://other.example.com/x", "/users/1"] {
            let resolved = try resolve(path)
            #expect(try resolved.url == URLBuilder.resolve(path: path, bases: .init(), configuration: configuration))
            #expect(resolved.facts.isHTTPS == resolved.url.isHTTPS)
            #expect(resolved.facts.hostKey == URLFacts(resolved.url).hostKey)
        }
        #expect(state.resolvedCount == 3)
        // what the state found for the path comes back without another resolution
        #expect(
            try state.current(resolving: "/users/1").known?.url.absoluteString
                == "https://api.example.com/base/users/1"
        )
        #expect(throws: CourierError.self) { try resolve("/a b") }
        // failures are not kept
        #expect(throws: CourierError.self) { try resolve("/a b") }
        #expect(state.resolvedCount == 3)
        for index in 0..<(SessionState.capacity + 10) {
            _ = try resolve("/n/\(index)")
        }
        #expect(state.resolvedCount <= SessionState.capacity)
        #expect(try resolve("/n/3").url.absoluteString == "https://api.example.com/base/n/3")
        // a new configuration starts an empty table
        _ = state.update { $0.decompressesResponses.toggle() }
        #expect(state.resolvedCount == 0)
    }

    /// A path's TLS policy and proxy are chosen as it resolves, under the configuration of the time, and chosen
    /// again under a new one; a request carries the path's.
    @Test func aResolvedPathCarriesItsTLSPolicyAndProxy() async throws {
        let state = SessionState(configuration)
        func preparation(_ path: String) throws -> RequestPreparation {
            let (snapshot, known) = try state.current(resolving: path)
            return RequestPreparation(snapshot: snapshot, start: .now, state: state, known: known)
        }
        let proxy = Proxy.http(host: "127.0.0.1", port: 3128)
        let loose = TLSPolicy(validatesDomainName: false)
        _ = state.update {
            $0.proxies = ProxySettings(all: proxy, bypass: ["other.example.com"])
            $0.tls = TLSSettings(hosts: ["api.example.com": loose])
        }
        for path in ["/a", "/a", "https://other.example.com/b"] {
            let resolved = try preparation(path).resolve(path)
            let isOther = path.hasPrefix("https://other")
            #expect(resolved.proxy == (isOther ? nil : proxy))
            #expect(resolved.tls == (isOther ? .standard : loose))
        }
        #expect(try state.current(resolving: "/a").known?.proxy == proxy)  // kept, not chosen again
        let prepared = try await preparation("/a").prepare(Request<Data>.get("/a").erased)
        #expect(prepared.proxy == proxy && prepared.tls == loose)
        _ = state.update { $0.proxies = .none }
        let resolved = try preparation("/a").resolve("/a")
        #expect(resolved.proxy == nil && resolved.tls == loose)
    }
}
