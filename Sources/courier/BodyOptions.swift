import ArgumentParser
import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a request command sends as its body, in curl's words: the `-d` family (joined with `&` in the order typed),
/// `--json`, `-F` (a multipart form), and `-G`, which puts the `-d` data in the query instead.
struct BodyOptions: ParsableArguments {
    @Option(
        name: [.customShort("d"), .customLong("data")],
        help: ArgumentHelp(
            "Data to send, as curl's -d: the text itself, @FILE (its line breaks removed) or @- (standard input); "
                + "repeated, joined with &. Sent as application/x-www-form-urlencoded unless -H says otherwise, "
                + "and makes the default method POST.",
            valueName: "data"
        )
    )
    var data: [PlacedArgument] = []

    @Option(
        help: ArgumentHelp(
            "Data as -d, but @FILE is sent byte for byte (streamed from disk when it is the only data).",
            valueName: "data"
        )
    )
    var dataBinary: [PlacedArgument] = []

    @Option(help: ArgumentHelp("Data as -d, with no special meaning for @.", valueName: "data"))
    var dataRaw: [PlacedArgument] = []

    @Option(
        help: ArgumentHelp(
            "Data to percent-encode, as curl's: content, =content, name=content, @FILE or name@FILE.",
            valueName: "data"
        )
    )
    var dataUrlencode: [PlacedArgument] = []

    @Flag(
        name: [.customShort("G"), .customLong("get")],
        help: "Send the -d data in the query of a GET instead of a body, as curl's -G."
    )
    var dataInQuery = false

    @Option(
        help: ArgumentHelp(
            "A JSON body: the text itself (checked to be JSON), @FILE or @-; sends Content-Type and "
                + "Accept application/json (unless -H sets Accept).",
            valueName: "json"
        )
    )
    var json: String?

    @Option(
        name: [.customShort("F"), .customLong("form")],
        help: ArgumentHelp(
            "A part of a multipart/form-data body, as curl's -F: name=value, name=@FILE (a file, streamed; "
                + ";type=TYPE and ;filename=NAME may follow) or name=<FILE (a field read from a file). Repeatable.",
            valueName: "name=value"
        )
    )
    var form: [String] = []

    /// The values given, for the code that reads them.
    var settings: BodySettings {
        BodySettings(
            data: data,
            dataBinary: dataBinary,
            dataRaw: dataRaw,
            dataUrlencode: dataUrlencode,
            dataInQuery: dataInQuery,
            json: json,
            form: form
        )
    }

    func validate() throws { try settings.validate() }
}

/// The values of ``BodyOptions``, as either reader of the line gives them: each value is the option of the same name's.
struct BodySettings {
    var data: [PlacedArgument] = []
    var dataBinary: [PlacedArgument] = []
    var dataRaw: [PlacedArgument] = []
    var dataUrlencode: [PlacedArgument] = []
    var dataInQuery = false
    var json: String?
    var form: [String] = []

    /// The `-d` family's values in the order they were typed.
    var dataParts: [CurlData.Part] {
        (data.map { ($0, CurlData.Kind.text) } + dataBinary.map { ($0, .binary) } + dataRaw.map { ($0, .raw) }
            + dataUrlencode.map { ($0, .urlencode) })
            .sorted { $0.0.place < $1.0.place }
            .map { CurlData.Part(kind: $0.1, text: $0.0.text) }
    }

    /// Whether any option gives a body (or, with `-G`, a query).
    var givesBody: Bool { !dataParts.isEmpty || json != nil || !form.isEmpty }

    func validate() throws {
        let kinds = [!dataParts.isEmpty, json != nil, !form.isEmpty].filter { $0 }.count
        if kinds > 1 { throw ValidationError("-d, --json and -F each give the body: use one of them") }
        if dataInQuery, json != nil || !form.isEmpty {
            throw ValidationError("-G puts -d data in the query; --json and -F are bodies")
        }
    }
}
