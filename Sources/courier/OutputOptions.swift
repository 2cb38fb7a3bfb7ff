import ArgumentParser
import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a request command shows its answer and what its exit status says of it, in curl's and xh's words.
struct OutputOptions: ParsableArguments {
    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "Write the body to FILE, through a temporary file renamed into place when whole; - is standard output.",
            valueName: "file"
        )
    )
    var output: String?

    @Flag(
        name: [.customShort("O"), .customLong("remote-name")],
        help: "Write the body to a file named as the URL's last path segment, in the current folder."
    )
    var remoteName = false

    @Option(
        name: [.customShort("C"), .customLong("continue-at")],
        help: ArgumentHelp(
            "With -, go on from the size of the -o (or -O) file: ask for the rest and append it, as curl's -C -.",
            valueName: "-"
        )
    )
    var continueAt: String?

    @Option(
        name: [.customShort("D"), .customLong("dump-header")],
        help: ArgumentHelp("Write the status line and the headers to FILE (- for standard output).", valueName: "file")
    )
    var dumpHeader: String?

    @Flag(
        name: [.customShort("i"), .customLong("include")],
        help: "Print the status line and the headers before the body."
    )
    var include = false

    @Flag(name: [.customShort("I"), .customLong("head")], help: "Send HEAD and print the status line and the headers.")
    var headOnly = false

    @Flag(name: .shortAndLong, help: "Print no status line, no progress and no error message (see -S).")
    var silent = false

    @Flag(name: [.customShort("S"), .customLong("show-error")], help: "With -s, still print an error message.")
    var showError = false

    @Flag(
        name: [.customShort("f"), .customLong("fail")],
        help: "Fail with exit 22 on a 4xx or 5xx answer, writing no body (curl's -f)."
    )
    var fail = false

    @Flag(help: "Exit 3, 4 or 5 on a 3xx, 4xx or 5xx answer (xh's --check-status); the body is still written.")
    var checkStatus = false

    @Option(
        name: [.customShort("w"), .customLong("write-out")],
        help: ArgumentHelp(
            "Print FORMAT on stdout after the transfer, failed or not (http_code 000 when no answer came); it may use "
                + "%{\(WriteOut.variables.joined(separator: "}, %{"))}, \\n and \\t; @FILE reads it from FILE.",
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

    /// The values given, for the code that reads them.
    var settings: OutputSettings {
        OutputSettings(
            output: output,
            remoteName: remoteName,
            continueAt: continueAt,
            dumpHeader: dumpHeader,
            include: include,
            headOnly: headOnly,
            silent: silent,
            showError: showError,
            fail: fail,
            checkStatus: checkStatus,
            writeOut: writeOut,
            pretty: pretty,
            maxFilesize: maxFilesize,
            verbose: verbose
        )
    }

    func validate() throws { try settings.validate() }
}

/// The values of ``OutputOptions``, as either reader of the line gives them: each value is the option of the same name's.
struct OutputSettings {
    var output: String?
    var remoteName = false
    var continueAt: String?
    var dumpHeader: String?
    var include = false
    var headOnly = false
    var silent = false
    var showError = false
    var fail = false
    var checkStatus = false
    var writeOut: String?
    var pretty: String?
    var maxFilesize: String?
    var verbose = false

    func validate() throws {
        if let pretty, OutputStyle(named: pretty) == nil {
            throw ValidationError("--pretty must be one of none, format, colors, all")
        }
        if let writeOut, !writeOut.hasPrefix("@") {  // a file is read when the request runs
            do { _ = try WriteOut(writeOut) } catch let error as UsageError { throw ValidationError(error.description) }
        }
        if output != nil && remoteName { throw ValidationError("-o and -O each name the output: use one of them") }
        if fail && checkStatus { throw ValidationError("-f and --check-status cannot be combined") }
        if let continueAt, continueAt != "-" {
            throw ValidationError("-C takes - (go on from the size of the -o file); courier takes no other offset")
        }
        if continueAt != nil, output == nil || output == "-", !remoteName {
            throw ValidationError("-C - goes on from the -o (or -O) file: name one")
        }
    }

    /// Whether a failure is told on stderr: always, unless `-s` without `-S`.
    var reportsErrors: Bool { !silent || showError }

    /// The most body bytes `--max-filesize` allows; `nil` without it.
    func bodyLimit() throws -> Int? {
        try maxFilesize.map { size in try UsageError.parsing("--max-filesize") { try CommandLineInput.byteSize(size) } }
    }

    /// The file the body goes to (`-o FILE`, or `-O`'s name from `url`); `nil` for standard output.
    ///
    /// `-O` takes the URL's last path segment as written, as curl does: `..%2F..%2Fx` names a file of that name in
    /// the current folder. Decoded, the server's `%2F`, `..`, `%00` and `%0A` would reach the file system.
    func outputPath(for url: URL) throws -> String? {
        if remoteName {
            let path = url.path(percentEncoded: true)
            let name = String(path[(path.lastIndex(of: "/").map(path.index(after:)) ?? path.startIndex)...])
            let isPlain = !name.unicodeScalars.contains {
                $0 == "/" || $0 == "\\" || $0.properties.generalCategory == .control
            }
            guard isPlain, !name.isEmpty, name != ".", name != ".." else {
                throw UsageError(option: "-O", message: "the URL has no file name in its path; use -o FILE")
            }
            return name
        }
        return output == "-" ? nil : output
    }
}
