import ArgumentParser
import Courier
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// The options of every command that sends requests (`get` and its siblings, `batch`, `download`, `upload`,
/// `queue work`): headers and credentials, the proxy, TLS, cookies, the HTTP version, timeouts, retries and
/// redirects. One group, so each command takes them alike and a test runs each of them on each command.
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: [.customShort("H"), .customLong("header")],
        help: "A header, 'Name: value'; 'Name:' with no value removes a default (such as User-Agent). Repeatable."
    )
    var headers: [String] = []

    @Option(
        name: [.customShort("u"), .customLong("user")],
        help: ArgumentHelp(
            "Basic authentication, user:password; with only user, the password is asked for on the terminal.",
            valueName: "user:password"
        )
    )
    var user: String?

    @Option(
        name: .customLong("oauth2-bearer"),
        help: ArgumentHelp("Send 'Authorization: Bearer TOKEN'.", valueName: "token")
    )
    var bearer: String?

    @Option(
        name: [.customShort("A"), .customLong("user-agent")],
        help: ArgumentHelp("The User-Agent to send (default \(CourierRelease.userAgent)).", valueName: "name")
    )
    var userAgent: String?

    @Option(
        name: [.customShort("x"), .long],
        help: ArgumentHelp(
            "Go through this proxy: http://[user:password@]host[:port] or socks5://host[:port]. "
                + "Without it, http_proxy, https_proxy, all_proxy and no_proxy apply (never to loopback).",
            valueName: "url"
        )
    )
    var proxy: String?

    @Option(
        help: ArgumentHelp("Trust the CA certificates in this PEM file instead of the system's.", valueName: "file")
    )
    var cacert: String?

    @Option(help: ArgumentHelp("A client certificate (PEM) for mutual TLS; needs --key.", valueName: "file"))
    var cert: String?

    @Option(help: ArgumentHelp("The client certificate's unencrypted private key (PEM).", valueName: "file"))
    var key: String?

    @Option(
        help: ArgumentHelp(
            "Require this public key, sha256/BASE64 of the server's SubjectPublicKeyInfo. Repeatable.",
            valueName: "pin"
        )
    )
    var pin: [String] = []

    @Flag(
        name: [.customShort("k"), .long],
        help: "Accept any server certificate (expired, self-signed, other host). Testing only."
    )
    var insecure = false

    @Option(
        name: [.customShort("b"), .customLong("cookie")],
        help: ArgumentHelp(
            "Cookies to send, as curl's -b: 'name=value; name2=value2' as written, or a cookie FILE (curl's "
                + "Netscape format; a missing one holds none) whose cookies go where they match.",
            valueName: "data|file"
        )
    )
    var cookie: String?

    @Option(
        name: [.customShort("c"), .customLong("cookie-jar")],
        help: ArgumentHelp(
            "Save every cookie (those -b read and those the server sets) to FILE in curl's Netscape format; "
                + "-b FILE -c FILE carries cookies from one run to the next.",
            valueName: "file"
        )
    )
    var cookieJar: String?

    @Option(
        help: ArgumentHelp(
            "Connect to ADDR for HOST, as curl's --resolve: the request and the certificate check keep the name. "
                + "The address serves every port of HOST (AsyncHTTPClient maps names, not names and ports). "
                + "Repeatable.",
            valueName: "host:port:addr"
        )
    )
    var resolve: [String] = []

    @Option(
        help: ArgumentHelp(
            "Write every request and answer to FILE as a HAR 1.2 log, which browsers and HAR viewers open: "
                + "headers and URLs with credentials hidden, bodies up to 64 KiB, timings, server address.",
            valueName: "file"
        )
    )
    var har: String?

    @Flag(help: "Offer HTTP/2 on https URLs; the server chooses through ALPN (the default, made explicit).")
    var http2 = false

    @Flag(name: .customLong("http1.1"), help: "Use HTTP/1.1 only, never HTTP/2.")
    var http11 = false

    @Option(
        name: [.customShort("m"), .customLong("max-time"), .customLong("timeout")],
        help: ArgumentHelp(
            "The longest a request may take, in seconds: connecting, sending and reading the answer to its "
                + "last byte, redirects and retries included (curl's --max-time). Default: none for get and its "
                + "siblings, upload and download, which end on silence (--read-timeout), as curl; 30 for batch "
                + "and queue work. For ws, the whole connection.",
            valueName: "seconds"
        )
    )
    var timeout: String?

    @Option(
        help: ArgumentHelp(
            "The longest wait for the next bytes of the answer, in seconds: raise it for a server that "
                + "answers only after processing a large upload. Default: 30.",
            valueName: "seconds"
        )
    )
    var readTimeout: String?

    @Option(help: ArgumentHelp("The longest wait for a connection, in seconds. Default: 30.", valueName: "seconds"))
    var connectTimeout: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Transient failures retried, each told on stderr (idempotent requests; for download, "
                + "from the last byte on disk). Default: 0; for download, 5.",
            valueName: "n"
        )
    )
    var retries: Int?

    @Option(
        name: .customLong("max-redirs"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "The most redirects followed (default 10); 0 follows none and prints the redirect itself.",
            valueName: "n"
        )
    )
    var maxRedirects: Int?

    @Flag(
        name: [.customShort("L"), .customLong("location")],
        help: "Follow redirects: the default, accepted for curl's habit."
    )
    var followsRedirects = false

    @Flag(help: "Ask for a compressed answer and decode it: the default, accepted for curl's habit.")
    var compressed = false

    /// The values given, for the code that reads them.
    var settings: ConnectionSettings {
        ConnectionSettings(
            headers: headers,
            user: user,
            bearer: bearer,
            userAgent: userAgent,
            proxy: proxy,
            cacert: cacert,
            cert: cert,
            key: key,
            pin: pin,
            insecure: insecure,
            cookie: cookie,
            cookieJar: cookieJar,
            resolve: resolve,
            har: har,
            http2: http2,
            http11: http11,
            timeout: timeout,
            readTimeout: readTimeout,
            connectTimeout: connectTimeout,
            retries: retries,
            maxRedirects: maxRedirects,
            followsRedirects: followsRedirects,
            compressed: compressed
        )
    }

    func validate() throws { try settings.validate() }

    /// See ``ConnectionSettings/configuration(_:)``.
    func configuration(_ base: Configuration = Configuration()) throws -> Configuration {
        try settings.configuration(base)
    }

    /// See ``ConnectionSettings/downloadConfiguration()``.
    func downloadConfiguration() throws -> Configuration { try settings.downloadConfiguration() }

    /// See ``ConnectionSettings/timeoutOverrides()``.
    func timeoutOverrides() throws -> TimeoutOverrides { try settings.timeoutOverrides() }
}

/// The values of ``ConnectionOptions``, as either reader of the line gives them, and the session configuration they
/// describe. Each value is the option of the same name's.
struct ConnectionSettings {
    var headers: [String] = []
    var user: String?
    var bearer: String?
    var userAgent: String?
    var proxy: String?
    var cacert: String?
    var cert: String?
    var key: String?
    var pin: [String] = []
    var insecure = false
    var cookie: String?
    var cookieJar: String?
    var resolve: [String] = []
    var har: String?
    var http2 = false
    var http11 = false
    var timeout: String?
    var readTimeout: String?
    var connectTimeout: String?
    var retries: Int?
    var maxRedirects: Int?
    var followsRedirects = false
    var compressed = false

    func validate() throws {
        if http2 && http11 { throw ValidationError("--http2 and --http1.1 cannot be combined") }
        if let retries, !(0...20).contains(retries) { throw ValidationError("--retries must be between 0 and 20") }
        if let maxRedirects, !(0...100).contains(maxRedirects) {
            throw ValidationError("--max-redirs must be between 0 and 100")
        }
        if user != nil && bearer != nil { throw ValidationError("-u and --oauth2-bearer cannot be combined") }
        if (cert == nil) != (key == nil) {
            throw ValidationError("--cert and --key go together: a client certificate needs its private key")
        }
    }

    /// The session configuration these options describe, on top of `base`, `--retries` as the session's retry rule.
    /// Every unusable value is a ``UsageError`` naming its option.
    func configuration(_ base: Configuration = Configuration()) throws -> Configuration {
        var configuration = try connection(base)
        if let retries, retries > 0 {
            configuration.retryPolicy = RetryPolicy(maxAttempts: retries + 1, baseDelay: .milliseconds(250))
            configuration.monitors.append(RetryReporter(total: retries))
        }
        return configuration
    }

    /// The configuration of a session that downloads: every option but `--retries`, which the download's own rule
    /// applies from the byte reached (the session's rule would resend whole exchanges).
    func downloadConfiguration() throws -> Configuration {
        try connection(Configuration())
    }

    /// Every option but `--retries`, on top of `base`.
    private func connection(_ base: Configuration) throws -> Configuration {
        var configuration = base
        if let har { configuration.monitors.append(try HARFiles.recorder(for: har)) }
        // As curl: the first -H of a name replaces the default, a later one of the same name is sent beside it,
        // and `Name:` removes the header, Accept-Encoding included (the answer then arrives as the server sent it).
        var given: Set<HTTPField.Name> = []
        for line in headers {
            if let name = try Self.removedHeader(line) {
                configuration.defaultHeaders[name] = nil
                given.remove(name)
                if name == .acceptEncoding { configuration.decompressesResponses = false }
            } else {
                let field = try UsageError.parsing("-H") { try CommandLineInput.header(line) }
                if given.insert(field.name).inserted { configuration.defaultHeaders[field.name] = nil }
                configuration.defaultHeaders.append(field)
            }
        }
        if let userAgent {
            configuration.defaultHeaders[.userAgent] = try UsageError.parsing("-A") {
                try HeaderValidation.field(name: "User-Agent", value: userAgent)
            }.value
        }
        if let authorization = try authorization() { configuration.defaultHeaders[.authorization] = authorization }
        configuration.tls.default = try UsageError.parsing("--pin") {
            try CommandLineInput.tlsPolicy(
                caBundle: cacert,
                certificate: cert,
                privateKey: key,
                pins: pin,
                insecure: insecure
            )
        }
        configuration.httpVersion = http11 ? .http1Only : .automatic
        configuration.proxies = try UsageError.parsing("--proxy") {
            try proxy.map { ProxySettings(all: try Proxy(url: $0)) } ?? ProxySettings.environment()
        }
        try CurlCookies.apply(cookie: cookie, jar: cookieJar, to: &configuration)
        for entry in resolve {
            let (host, address) = try UsageError.parsing("--resolve") { try CommandLineInput.hostAddress(entry) }
            configuration.hostAddresses[host] = address
        }
        if let seconds = try seconds(timeout, "--timeout") { configuration.timeouts.total = seconds }
        if let seconds = try seconds(readTimeout, "--read-timeout") { configuration.timeouts.readIdle = seconds }
        if let seconds = try seconds(connectTimeout, "--connect-timeout") { configuration.timeouts.connect = seconds }
        if let maxRedirects {
            configuration.redirects.follows = maxRedirects > 0
            configuration.redirects.maxHops = max(maxRedirects, 1)
        }
        return configuration
    }

    /// The timeouts as a request's overrides: an upload and a download carry long totals of their own, which a
    /// `--timeout` given on the command line replaces (the session's timeouts cover every other request).
    func timeoutOverrides() throws -> TimeoutOverrides {
        TimeoutOverrides(
            connect: try seconds(connectTimeout, "--connect-timeout"),
            readIdle: try seconds(readTimeout, "--read-timeout"),
            total: try seconds(timeout, "--timeout")
        )
    }

    private func seconds(_ text: String?, _ option: String) throws -> Duration? {
        guard let text else { return nil }
        return try UsageError.parsing(option) { try CommandLineInput.seconds(text) }
    }

    /// The `Authorization` value `-u` or `--oauth2-bearer` asks for; a `-u` without a password asks for one on the
    /// terminal, without echo, and is a usage error when there is no terminal to ask on (never an empty password
    /// sent silently).
    private func authorization() throws -> String? {
        if let bearer {
            return try UsageError.parsing("--oauth2-bearer") {
                try HeaderValidation.field(name: "Authorization", value: "Bearer \(bearer)")
            }.value
        }
        guard let user else { return nil }
        var credentials = user
        if !user.contains(":") {
            guard isatty(STDIN_FILENO) != 0, let password = getpass("Enter the password for '\(user)': ") else {
                throw UsageError(
                    option: "-u",
                    message: "no password given and no terminal to ask for one on: write -u user:password"
                )
            }
            credentials += ":" + String(cString: password)
        }
        return "Basic " + Data(credentials.utf8).base64EncodedString()
    }

    /// The name in `Name:` (nothing after the colon), which curl's `-H` takes as "do not send this header".
    private static func removedHeader(_ line: String) throws -> HTTPField.Name? {
        guard line.hasSuffix(":"), line.dropLast().allSatisfy({ $0 != ":" }) else { return nil }
        let name = String(line.dropLast())
        guard let field = HTTPField.Name(name) else {
            throw UsageError(option: "-H", message: "\"\(CourierError.printable(name))\" is not a header name")
        }
        return field
    }
}
