import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Turns a ``Request`` into the ``PreparedRequest`` that goes to the transport: URL building, parameter
/// placement, default and raw headers, body encoding, how the transport sends it (timeouts, deadline, TLS policy,
/// proxy, HTTP version), then the adapters. Header values written as text are checked where they enter (see
/// ``HeaderValidation``); a field made otherwise holds a legal value by construction, since HTTPTypes replaces
/// what a field value may not hold, so nothing here checks them again.
struct RequestPreparation {
    let snapshot: SessionSnapshot
    /// When the call started: the deadline counts from here.
    let start: Tick
    /// Where the URLs of paths resolved under `snapshot` are kept.
    let state: SessionState
    /// What the request's path resolved to before, if `state` held it.
    let known: ResolvedURL?

    /// For reading single settings. Calls that take the whole configuration pass `snapshot.configuration`, the
    /// stored value, instead: a computed property returns a copy, which retains every reference it holds.
    private var configuration: Configuration { snapshot.configuration }

    /// Whether parameters of `method` travel in the query.
    private static func sendsParametersInQuery(_ method: HTTPRequest.Method) -> Bool {
        method == .get || method == .head || method == .delete
    }

    nonisolated(nonsending) func prepare(_ request: ErasedRequest) async throws -> PreparedRequest {
        let prepared = request.isRaw ? try prepareRaw(request) : try prepareConfigured(request)
        guard !request.isRaw, !configuration.adapters.isEmpty else { return prepared }
        var adapted = prepared
        for adapter in configuration.adapters {
            do { adapted = try await adapter.adapt(adapted) } catch let error as CourierError { throw error } catch {
                throw CourierError(
                    code: .encoding,
                    message: "an adapter refused the request: \(error)",
                    underlying: error
                )
            }
        }
        guard URLBuilder.absoluteURL(adapted.url.absoluteString) != nil else {
            throw CourierError.invalidURL(adapted.url.absoluteString)
        }
        if adapted.url != prepared.url { adapted.route(under: configuration, own: request.tls, on: adapted.url.host()) }
        return adapted
    }

    /// The request as prepared from its parts, with how the transport sends it and its URL's facts, which the pool
    /// and the transport read: those `resolved` kept for its path (a query appended since changes neither scheme
    /// nor host), else worked out here.
    private func prepared(
        _ request: ErasedRequest,
        url: URL,
        resolved: ResolvedURL?,
        headers: HTTPFields,
        body: PreparedBody
    ) -> PreparedRequest {
        let timeouts = configuration.timeouts.applying(request.timeouts)
        let route = resolved.map { (tls: $0.tls, proxy: $0.proxy) } ?? configuration.route(for: url)
        return PreparedRequest(
            method: request.method,
            url: url,
            facts: resolved?.facts ?? URLFacts(url),
            headers: headers,
            body: body,
            tag: request.tag,
            userInfo: request.userInfo,
            timeouts: timeouts,
            deadline: start + timeouts.total,
            tls: request.tls ?? route.tls,
            proxy: route.proxy,
            httpVersion: configuration.httpVersion
        )
    }

    private func prepareRaw(_ request: ErasedRequest) throws -> PreparedRequest {
        try URLBuilder.validateCharacters(request.path)
        guard let written = URLBuilder.absoluteURL(request.path) else {
            throw CourierError.invalidURL(request.path, reason: "a raw request needs an absolute http(s) URL")
        }
        let body = try request.body.prepare()
        var headers = request.headers
        try Self.overlay(rawHeaders: request.rawHeaders, onto: &headers)
        let url = Self.movingCredentials(of: written, into: &headers)
        if !request.body.isEmpty, !headers.contains(.contentType), let type = request.body.contentType {
            headers[.contentType] = type
        }
        return prepared(
            request,
            url: URLBuilder.appending(request.query, to: url),
            resolved: nil,
            headers: headers,
            body: body
        )
    }

    /// The URL `path` resolves to with the configured bases, with its facts: the one the state held before when
    /// there is one (parsing and checking an absolute URL was about 1.5 % of a small GET's CPU), else a new one,
    /// which the state keeps for the next request with this path.
    func resolve(_ path: String) throws -> ResolvedURL {
        if let known { return known }
        let url = try URLBuilder.resolve(path: path, bases: URLBuilder.Bases(), configuration: snapshot.configuration)
        let resolved = ResolvedURL(url, under: configuration)
        state.remember(resolved, for: path, under: snapshot)
        return resolved
    }

    private func prepareConfigured(_ request: ErasedRequest) throws -> PreparedRequest {
        var url: URL
        var resolved: ResolvedURL?  // the query appended below changes neither scheme nor host
        if request.resolvesAgainstConfiguredBases {
            let path = try resolve(request.path)
            (url, resolved) = (path.url, path)
        } else {
            let bases = URLBuilder.Bases(
                requestBase: request.baseURL,
                service: request.service,
                usesCDN: request.usesCDN,
                ignoresBase: request.ignoresBaseURL,
                apiVersion: request.apiVersion
            )
            url = try URLBuilder.resolve(path: request.path, bases: bases, configuration: snapshot.configuration)
        }

        var parameters = request.includesDefaultParameters ? configuration.defaultParameters : [:]
        parameters.merge(request.parameters) { _, own in own }
        for adapter in configuration.parameterAdapters {
            do { parameters = try adapter.adapt(parameters, method: request.method, path: request.path) } catch let
                error as CourierError
            {
                throw error
            } catch {
                throw CourierError(
                    code: .encoding,
                    message: "a parameter adapter refused the request: \(error)",
                    underlying: error
                )
            }
        }
        var query = request.query
        var bodyDescription = request.body
        if Self.sendsParametersInQuery(request.method) || !request.body.isEmpty {
            query.merge(parameters) { own, _ in own }  // explicit bodies keep their bytes; parameters go to the query
        } else if !parameters.isEmpty {
            switch request.parameterEncoding ?? configuration.parameterEncoding {
            case .form: bodyDescription = .form(parameters)
            case .json: bodyDescription = .json(ParameterValue.object(parameters))
            }
        }
        url = URLBuilder.appending(query, to: url)

        var headers = request.includesDefaultHeaders ? snapshot.defaultFields : HTTPFields()
        if resolved?.facts.hasUserInfo ?? (url.user(percentEncoded: true) != nil) {
            (url, resolved) = (Self.movingCredentials(of: url, into: &headers), nil)
        }
        // The defaults alone already carry `Accept-Encoding` (see ``SessionSnapshot/defaultFields``): the usual
        // request, with no fields of its own, looks nothing up.
        let ownFields = !request.headers.isEmpty || !request.rawHeaders.isEmpty || !request.includesDefaultHeaders
        if ownFields {
            for name in Set(request.headers.map(\.name)) { headers[values: name] = request.headers[values: name] }
            try Self.overlay(rawHeaders: request.rawHeaders, onto: &headers)
            headers.joinCookieFields()
        }
        if !bodyDescription.isEmpty, !headers.contains(.contentType), let type = bodyDescription.contentType {
            headers[.contentType] = type
        }
        if ownFields, configuration.decompressesResponses, !headers.contains(.acceptEncoding) {
            headers[.acceptEncoding] = SessionSnapshot.acceptedEncodings
        }
        if request.leavesCredentialsOut {
            for name in configuration.redirects.crossOriginStrippedHeaders { headers[name] = nil }
        }
        return prepared(request, url: url, resolved: resolved, headers: headers, body: try bodyDescription.prepare())
    }

    /// `url` without its `user:password@`, which goes into `headers` as `Authorization: Basic` (as curl sends it)
    /// unless the request already has an `Authorization` of its own; never dropped silently, never left in a URL
    /// that logs and caches would show. The user and password are percent-decoded first, as curl does.
    static func movingCredentials(of url: URL, into headers: inout HTTPFields) -> URL {
        guard let user = url.user(percentEncoded: true),
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url }
        let password = url.password(percentEncoded: true) ?? ""
        if !headers.contains(.authorization) {
            let decoded = (PercentEncoding.decode(user) ?? user) + ":" + (PercentEncoding.decode(password) ?? password)
            headers[.authorization] = "Basic " + Data(decoded.utf8).base64EncodedString()
        }
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        return components.url ?? url
    }

    /// Validates string headers and sets them, replacing earlier values of the same name.
    private static func overlay(rawHeaders: [(name: String, value: String)], onto headers: inout HTTPFields) throws {
        var replaced = Set<HTTPField.Name>()
        for (name, value) in rawHeaders {
            let field = try HeaderValidation.field(name: name, value: value)
            if replaced.insert(field.name).inserted { headers[values: field.name] = [] }
            headers.append(field)
        }
    }
}

// MARK: - The paths resolved before

extension Request {
    /// Whether the request's path resolves against the configured bases alone, so its URL can be kept for the next
    /// request with the same path (``SessionState``).
    var resolvesAgainstConfiguredBases: Bool {
        !isRaw && baseURL == nil && service == nil && !usesCDN && !ignoresBaseURL && apiVersion == nil
    }
}

extension PreparedRequest {
    /// Chooses the TLS policy and the proxy for ``url`` under `configuration` again: after an adapter or a redirect
    /// changed the URL. The request's `own` policy (``Request/tls``) stays for its own `host`.
    mutating func route(under configuration: Configuration, own: TLSPolicy?, on host: String?) {
        (tls, proxy) = configuration.route(for: url)
        if let own, url.host() == host { tls = own }
    }
}

extension Configuration {
    /// The TLS policy and the proxy a request to `url` is sent with.
    func route(for url: URL) -> (tls: TLSPolicy, proxy: Proxy?) {
        (tls.policy(for: url), proxies.proxy(for: url))
    }
}
