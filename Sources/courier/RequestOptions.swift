import ArgumentParser
import Courier
import Foundation
import HTTPTypes
import Logging

/// The options every request command shares.
struct RequestOptions: ParsableArguments {
    @Argument(help: "The URL to request (http or https; without a scheme, http:// is assumed).")
    var url: String

    @Option(name: [.customShort("H"), .customLong("header")], help: "A header, 'Name: value'. Repeatable.")
    var headers: [String] = []

    @Option(name: .customLong("param"), help: "A query parameter (a body parameter with --form), key=value. Repeatable.")
    var params: [String] = []

    @Option(help: "A JSON body, sent as application/json.")
    var json: String?

    @Option(help: "A form field, key=value, sent as application/x-www-form-urlencoded. Repeatable.")
    var form: [String] = []

    @Option(name: .shortAndLong, help: "Write the body to FILE (atomically) instead of stdout.")
    var output: String?

    @Flag(name: .shortAndLong, help: "Log the request and response (credentials redacted) to stderr.")
    var verbose = false

    @OptionGroup var timeouts: TimeoutArguments

    @Option(parsing: .unconditional, help: "Retries of transient failures for idempotent methods, each told on stderr.")
    var retries: Int = 0

    @OptionGroup var cache: CacheArguments

    @OptionGroup var tls: TLSArguments

    @Flag(help: "Offer HTTP/2 on https URLs; the server chooses through ALPN (the default, made explicit).")
    var http2 = false

    @Flag(name: .customLong("http1.1"), help: "Use HTTP/1.1 only, never HTTP/2.")
    var http11 = false

    @Option(help: ArgumentHelp("Go through this proxy: http://[user:password@]host[:port] or socks5://host[:port]. "
                               + "Without it, http_proxy, https_proxy, all_proxy and no_proxy apply (never to loopback).",
                               valueName: "url"))
    var proxy: String?

    @Option(help: ArgumentHelp("Send the cookies in FILE and save the ones the server sets back to it (created if missing).",
                               valueName: "file"))
    var cookieJar: String?

    func validate() throws {
        if json != nil && !form.isEmpty { throw ValidationError("--json and --form cannot be combined") }
        if retries < 0 || retries > 20 { throw ValidationError("--retries must be between 0 and 20") }
        if http2 && http11 { throw ValidationError("--http2 and --http1.1 cannot be combined") }
    }

    /// The request these options describe.
    func request(method: HTTPRequest.Method) throws -> Request<Data> {
        var request = Request<Data>(method: method, path: try CommandLineInput.url(url).absoluteString, query: try CommandLineInput.parameters(params))
        for line in headers { request.headers.append(try CommandLineInput.header(line)) }
        if let json { request.body = try CommandLineInput.jsonBody(json) }
        if !form.isEmpty { request.body = .form(try CommandLineInput.parameters(form)) }
        try timeouts.apply(to: &request)
        if retries > 0 { request.retryPolicy = RetryPolicy(maxAttempts: retries + 1, baseDelay: .milliseconds(250)) }
        return request
    }

    /// The session configuration: no base URL, no status validation (the CLI reports the status itself).
    func configuration() throws -> Configuration {
        var configuration = Configuration {
            $0.validators = []
            $0.logger = Logger(label: "courier") { StreamLogHandler.standardError(label: $0) }  // stdout holds the body
            $0.logger.logLevel = verbose ? .debug : .warning
            $0.debugLogging = verbose
        }
        try cache.apply(to: &configuration)
        try tls.apply(to: &configuration)
        configuration.httpVersion = http11 ? .http1Only : .automatic
        configuration.proxies = try proxy.map { ProxySettings(all: try Proxy(url: $0)) } ?? ProxySettings.environment()
        if let cookieJar { configuration.cookieJar = try CookieJar(file: URL(filePath: cookieJar)) }
        if retries > 0 { configuration.monitors = [RetryReporter(total: retries)] }
        return configuration
    }
}
