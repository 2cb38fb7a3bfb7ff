import ArgumentParser
import Courier
import Foundation
import HTTPTypes
import Logging

/// The options of `get`, `post`, `put`, `delete`, `patch` and `head`: what to send, how to show the answer, and
/// the connection options every request command shares.
struct RequestOptions: ParsableArguments {
    @Argument(help: "The URL to request (http or https; without a scheme, http:// is assumed).")
    var url: String

    @Option(
        name: .customLong("param"),
        help: "A query parameter (a body parameter with --form), key=value. Repeatable."
    )
    var params: [String] = []

    @Option(
        name: [.customShort("d"), .customLong("data")],
        help: ArgumentHelp(
            "A raw body: the text itself, @FILE (streamed from disk) or @- (standard input, streamed); "
                + "sent as application/x-www-form-urlencoded unless -H says otherwise.",
            valueName: "data"
        )
    )
    var data: String?

    @Option(
        help: ArgumentHelp(
            "A JSON body: the text itself (checked to be JSON), @FILE or @-; sends Content-Type and "
                + "Accept application/json (unless -H sets Accept).",
            valueName: "json"
        )
    )
    var json: String?

    @Option(
        help: ArgumentHelp(
            "A form field, key=value (key=@FILE or key=@- takes the value from a file or standard input), "
                + "sent as application/x-www-form-urlencoded. Repeatable.",
            valueName: "key=value"
        )
    )
    var form: [String] = []

    @Option(
        name: .shortAndLong,
        help: "Write the body to FILE, through a temporary file renamed into place when whole."
    )
    var output: String?

    @Flag(
        name: [.customShort("i"), .customLong("include")],
        help: "Print the status line and the headers before the body."
    )
    var include = false

    @Flag(name: [.customShort("I"), .customLong("head")], help: "Send HEAD and print the status line and the headers.")
    var headOnly = false

    @Flag(name: .shortAndLong, help: "Print no status line and no progress.")
    var silent = false

    @Option(
        name: [.customShort("w"), .customLong("write-out")],
        help: ArgumentHelp(
            "Print FORMAT on stdout after the transfer; it may use %{\(WriteOut.variables.joined(separator: "}, %{"))}, "
                + "\\n and \\t.",
            valueName: "format"
        )
    )
    var writeOut: String?

    @Option(
        help: ArgumentHelp(
            "How to show a body on a terminal: none, format (re-indent JSON), colors, or all (the default on a "
                + "terminal; NO_COLOR turns colours off). Output into a pipe or a file is the bytes as received.",
            valueName: "style"
        )
    )
    var pretty: String?

    @Option(
        help: ArgumentHelp(
            "Fail (exit 63) when the body is larger than SIZE, such as 10M; a body read whole (--cache) is "
                + "limited to 256 MiB in any case.",
            valueName: "size"
        )
    )
    var maxFilesize: String?

    @Flag(name: .shortAndLong, help: "Log the request and response (credentials redacted) to stderr.")
    var verbose = false

    @OptionGroup var cache: CacheArguments

    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        if [data != nil, json != nil, !form.isEmpty].filter({ $0 }).count > 1 {
            throw ValidationError("-d, --json and --form each give the body: use one of them")
        }
        if let pretty, OutputStyle(named: pretty) == nil {
            throw ValidationError("--pretty must be one of none, format, colors, all")
        }
        if let writeOut {
            do { _ = try WriteOut(writeOut) } catch let error as UsageError { throw ValidationError(error.description) }
        }
        if headOnly, data != nil || json != nil || !form.isEmpty {
            throw ValidationError("-I sends HEAD, which carries no body")
        }
    }

    /// The request these options describe; `defaults` are the session's default headers (so `--json` leaves an
    /// `Accept` given with `-H` alone).
    func request(method: HTTPRequest.Method, defaults: HTTPFields) throws -> Request<Data> {
        let target = try UsageError.parsing("URL") { try CommandLineInput.url(url) }
        let query = try UsageError.parsing("--param") { try CommandLineInput.parameters(params) }
        var request = Request<Data>(method: headOnly ? .head : method, path: target.absoluteString, query: query)
        if let data {
            request.body = try CommandLineInput.body(
                data,
                option: "-d",
                contentType: "application/x-www-form-urlencoded"
            )
        }
        if let json {
            request.body = try CommandLineInput.body(json, option: "--json", contentType: "application/json")
            if defaults[.accept] == nil { request.headers[.accept] = "application/json" }
        }
        if !form.isEmpty { request.body = .form(try CommandLineInput.formFields(form)) }
        return request
    }

    /// The session configuration: no status validation (the CLI reports the status itself), logs on stderr.
    func configuration() throws -> Configuration {
        var configuration = Configuration {
            $0.validators = []
            $0.logger = Logger(label: "courier") { StreamLogHandler.standardError(label: $0) }  // stdout holds the body
            $0.logger.logLevel = verbose ? .debug : .warning
            $0.debugLogging = verbose
        }
        try cache.apply(to: &configuration)
        return try connection.configuration(configuration)
    }

    /// The most body bytes `--max-filesize` allows; `nil` without it.
    func bodyLimit() throws -> Int? {
        try maxFilesize.map { size in try UsageError.parsing("--max-filesize") { try CommandLineInput.byteSize(size) } }
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
