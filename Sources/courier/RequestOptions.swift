import ArgumentParser
import Courier
import HTTPTypes
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The options of `get`, `post`, `put`, `delete`, `patch` and `head`, in curl's and xh's grammar: the URL, xh's
/// request items after it, what to send, how to show the answer, and the connection options every request command
/// shares. Options go anywhere on the line.
struct RequestOptions: ParsableArguments {
    @Argument(
        help: ArgumentHelp(
            "The URL to request (http or https; without a scheme, http:// is assumed), after xh's capitalised "
                + "method word when one is given (courier -v POST URL).",
            valueName: "url"
        )
    )
    var firstWord: String

    @Argument(
        help: ArgumentHelp(
            "xh's request items: name==value (query), Name:value (header), name=value (JSON field), "
                + "name:=json (raw JSON field), name@FILE (a file, sent as a multipart form).",
            valueName: "item"
        )
    )
    var items: [String] = []

    @Option(
        name: [.customShort("X"), .customLong("request")],
        help: ArgumentHelp(
            "The method to send, whatever the command or the body (curl's -X; xh's is a capitalised first word).",
            valueName: "method"
        )
    )
    var method: String?

    @Option(
        name: .customLong("param"),
        help: "A query parameter, key=value (encoded). Repeatable."
    )
    var params: [String] = []

    @OptionGroup var body: BodyOptions

    @OptionGroup var show: OutputOptions

    @OptionGroup var cache: CacheArguments

    @OptionGroup var connection: ConnectionOptions

    /// The values given, for the code that reads them.
    var settings: RequestSettings {
        RequestSettings(
            firstWord: firstWord,
            items: items,
            method: method,
            params: params,
            body: body.settings,
            show: show.settings,
            cache: cache.settings,
            connection: connection.settings
        )
    }

    func validate() throws { try settings.validate() }
}

/// The values of ``RequestOptions`` as either reader of the line gives them (swift-argument-parser, or
/// ``RequestCommandLine`` for most lines), the request and the session configuration they describe.
struct RequestSettings {
    /// The first word that is not an option: the URL, or xh's method word before it.
    var firstWord: String
    /// The words after it.
    var items: [String] = []
    /// `-X`.
    var method: String?
    /// `--param`.
    var params: [String] = []
    var body = BodySettings()
    var show = OutputSettings()
    var cache = CacheSettings()
    var connection = ConnectionSettings()

    /// xh's `[METHOD] URL [ITEM]...`: the first word is the method when it is a capitalised method word and a URL
    /// follows, wherever the options put it (`courier POST URL`, `courier -v POST URL`).
    private var words: (method: HTTPRequest.Method?, url: String, items: [String]) {
        if let method = CommandLineGrammar.methodWord(firstWord), let url = items.first {
            return (method, url, Array(items.dropFirst()))
        }
        return (nil, firstWord, items)
    }

    /// The URL as typed.
    var url: String { words.url }

    func validate() throws {
        if let method, HTTPRequest.Method(method) == nil {
            throw ValidationError("-X: \"\(CourierError.printable(method, limit: 40))\" is not an HTTP method")
        }
        let items: RequestItems
        do { items = try RequestItems(words.items) } catch let error as UsageError {
            throw ValidationError(error.description)
        }
        if items.givesBody, body.givesBody {
            throw ValidationError("request items and -d, --json or -F each give the body: use one of them")
        }
        if show.headOnly, body.givesBody || items.givesBody, !body.dataInQuery {
            throw ValidationError("-I sends HEAD, which carries no body")
        }
    }

    /// The method to send: `-X`; xh's method word; `-I`'s HEAD; the command's own unless it is `get`, whose default
    /// is curl's and xh's (POST when a body is given, GET otherwise or with `-G`).
    func method(for command: HTTPRequest.Method, givesBody: Bool) -> HTTPRequest.Method {
        if let method, let explicit = HTTPRequest.Method(method) { return explicit }
        if let word = words.method { return word }
        if show.headOnly { return .head }
        guard command == .get else { return command }
        return givesBody && !body.dataInQuery ? .post : .get
    }

    /// The request these options describe for `command`; `defaults` are the session's default headers (so `--json`
    /// leaves an `Accept` given with `-H` alone).
    func request(command: HTTPRequest.Method, defaults: HTTPFields) throws -> Request<Data> {
        let items = try RequestItems(words.items)
        var target = try UsageError.parsing("URL") { try CommandLineInput.url(url) }
        let dataParts = body.dataParts
        if body.dataInQuery, !dataParts.isEmpty {
            let data = String(decoding: try CurlData.joined(dataParts), as: UTF8.self)
            let separator = target.query == nil ? "?" : "&"
            target = try UsageError.parsing("-G") { try CommandLineInput.url(target.absoluteString + separator + data) }
        }
        let query = try UsageError.parsing("--param") {
            try CommandLineInput.parameters(named: CommandLineInput.namedValues(params) + items.query)
        }
        let givesBody = body.givesBody || items.givesBody
        var request = Request<Data>(
            method: method(for: command, givesBody: givesBody),
            path: target.absoluteString,
            query: query
        )
        if !dataParts.isEmpty, !body.dataInQuery { request.body = try CurlData.body(dataParts) }
        if let json = body.json {
            request.body = try CommandLineInput.body(json, option: "--json", contentType: "application/json")
            if defaults[.accept] == nil { request.headers[.accept] = "application/json" }
        }
        if !body.form.isEmpty { request.body = try CurlForm.body(body.form) }
        if let itemBody = try items.body() {
            request.body = itemBody
            if defaults[.accept] == nil, itemBody.contentType == "application/json" {
                request.headers[.accept] = "application/json, */*;q=0.5"
            }
        }
        return request
    }

    /// The session configuration: no status validation (the CLI reports the status itself), logs on stderr, no
    /// total timeout unless `-m` gives one (curl has none), and the request items' headers beside `-H`'s.
    func configuration() throws -> Configuration {
        var configuration = Configuration {
            $0.validators = []
            $0.logger = Logger(label: "courier") { StreamLogHandler.standardError(label: $0) }  // stdout holds the body
            $0.logger.logLevel = show.verbose ? .debug : .warning
            $0.debugLogging = show.verbose
            $0.timeouts.total = Timeouts.noLimit
        }
        try cache.apply(to: &configuration)
        var connection = self.connection
        connection.headers += try RequestItems(words.items).headers
        return try connection.configuration(configuration)
    }
}

/// How a body is shown: `--pretty`, the terminal and `NO_COLOR` decide.
struct OutputStyle {
    var formats: Bool
    var colours: Bool

    /// The style for output to a terminal or not: `--pretty` when given, else `all` on a terminal (without colours
    /// when `NO_COLOR` is set to anything) and `none` elsewhere.
    static func choose(_ name: String?, onTerminal: Bool) -> OutputStyle {
        var style = name.flatMap(OutputStyle.init(named:)) ?? OutputStyle(formats: onTerminal, colours: onTerminal)
        if let noColor = ProcessInfo.processInfo.environment["NO_COLOR"], !noColor.isEmpty { style.colours = false }
        return style
    }
}

extension OutputStyle {
    /// A style by its `--pretty` name; `nil` for an unknown one.
    init?(named name: String) {
        switch name {
        case "none": (formats, colours) = (false, false)
        case "format": (formats, colours) = (true, false)
        case "colors", "colours": (formats, colours) = (false, true)
        case "all": (formats, colours) = (true, true)
        default: return nil
        }
    }
}
