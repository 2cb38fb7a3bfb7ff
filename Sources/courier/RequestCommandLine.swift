/// The request commands' line (`get` and its siblings) read by the CLI's own code, so that a request spends its
/// start-up on the request: swift-argument-parser's first parse took 8 of a 1 KiB GET's 19 ms of CPU, building the
/// command's argument set by reflection four times and looking up the conformances of every option's type.
///
/// It reads only a line it understands word for word: known long names (`--name value`, `--name=value`), known short
/// names (`-X value`, flags grouped as `-sS`, a value option last in a group as `-sSX PUT`), and words that do not
/// start with `-`. Anything else — help, an unknown or misspelt option, `--`, a value that starts with `-`, a number
/// that is not one, a line that fails validation — gives `nil`, and the line goes through swift-argument-parser, so
/// its messages stay the ones users see. Both give a ``RequestSettings``; `RequestCommandLineTests` checks that they
/// agree on every option.
enum RequestCommandLine {
    /// The options `arguments` (the words after the command's name) give; `nil` for a line to leave to
    /// swift-argument-parser.
    static func options(_ arguments: [String]) -> RequestSettings? {
        let setters = setters()
        var options = RequestSettings(firstWord: "")
        var positional: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let word = arguments[index]
            index += 1
            guard word.hasPrefix("-"), word != "-" else {
                positional.append(word)
                continue
            }
            let (names, attached) = split(word)
            guard !names.isEmpty else { return nil }
            for (position, name) in names.enumerated() {
                switch setters[name] {
                case .flag(let set)?:
                    guard attached == nil else { return nil }
                    set(&options)
                case .value(let set)?:
                    guard position == names.count - 1 else { return nil }  // a value option inside a group of flags
                    let value: String
                    if let attached {
                        // `--data=` is swift-argument-parser's "missing value".
                        guard !attached.isEmpty else { return nil }
                        value = attached
                    } else {
                        guard index < arguments.endIndex else { return nil }
                        value = arguments[index]
                        index += 1
                    }
                    guard !value.hasPrefix("-") || value == "-", set(&options, value) else { return nil }
                case nil:
                    return nil
                }
            }
        }
        guard let url = positional.first else { return nil }
        options.firstWord = url
        options.items = Array(positional.dropFirst())
        guard (try? options.validateAll()) != nil else { return nil }
        return options
    }

    /// The words `arguments` starts with, up to its first word that is not an option or an option's value; `nil`
    /// when one of them is an option this reader does not know (whether it takes a value is then unknown).
    static func leadingOptionCount(_ arguments: [String]) -> Int? {
        let setters = setters()
        var index = arguments.startIndex
        while index < arguments.endIndex, arguments[index].hasPrefix("-"), arguments[index] != "-" {
            let (names, attached) = split(arguments[index])
            guard let last = names.last, names.allSatisfy({ setters[$0] != nil }) else { return nil }
            index += 1
            if case .value? = setters[last], attached == nil { index += 1 }
        }
        return min(index, arguments.endIndex)
    }

    /// The option names in `word` (one long name, or each letter of a short group) and a value given after `=`
    /// in a long one; no names for a word of another shape (`--`, `-X=PUT`, `-d@file`).
    private static func split(_ word: String) -> (names: [String], attached: String?) {
        if word.hasPrefix("--") {
            let body = word.dropFirst(2)
            guard let first = body.first, first != "=" else { return ([], nil) }
            guard let equals = body.firstIndex(of: "=") else { return ([word], nil) }
            return (["--" + body[..<equals]], String(body[body.index(after: equals)...]))
        }
        let letters = word.dropFirst()
        guard letters.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return ([], nil) }
        return (letters.map { "-\($0)" }, nil)
    }

    /// What an option does to the options: a flag sets itself, a value option takes the next word (or the text
    /// after `=`) and answers whether swift-argument-parser would take it.
    private enum Setter {
        case flag((inout RequestSettings) -> Void)
        case value((inout RequestSettings, String) -> Bool)
    }

    /// A value option that holds one value: the last one given, as swift-argument-parser keeps it.
    private static func one(_ set: @escaping (inout RequestSettings, String) -> Void) -> Setter {
        .value { options, value in
            set(&options, value)
            return true
        }
    }

    /// A value option that holds a number (`Int(argument:)`, as swift-argument-parser reads one).
    private static func number(_ set: @escaping (inout RequestSettings, Int) -> Void) -> Setter {
        .value { options, value in
            guard let number = Int(value) else { return false }
            set(&options, number)
            return true
        }
    }

    /// Every name of every option of ``RequestOptions`` and its groups, with the setting it sets.
    private static func setters() -> [String: Setter] {
        let table: [([String], Setter)] = [
            (["-X", "--request"], one { $0.method = $1 }),
            (["--param"], one { $0.params.append($1) }),
            // BodyOptions
            (["-d", "--data"], one { $0.body.data.append(PlacedArgument(argument: $1)) }),
            (["--data-binary"], one { $0.body.dataBinary.append(PlacedArgument(argument: $1)) }),
            (["--data-raw"], one { $0.body.dataRaw.append(PlacedArgument(argument: $1)) }),
            (["--data-urlencode"], one { $0.body.dataUrlencode.append(PlacedArgument(argument: $1)) }),
            (["-G", "--get"], .flag { $0.body.dataInQuery = true }),
            (["--json"], one { $0.body.json = $1 }),
            (["-F", "--form"], one { $0.body.form.append($1) }),
            // OutputOptions
            (["-o", "--output"], one { $0.show.output = $1 }),
            (["-O", "--remote-name"], .flag { $0.show.remoteName = true }),
            (["-C", "--continue-at"], one { $0.show.continueAt = $1 }),
            (["-D", "--dump-header"], one { $0.show.dumpHeader = $1 }),
            (["-i", "--include"], .flag { $0.show.include = true }),
            (["-I", "--head"], .flag { $0.show.headOnly = true }),
            (["-s", "--silent"], .flag { $0.show.silent = true }),
            (["-S", "--show-error"], .flag { $0.show.showError = true }),
            (["-f", "--fail"], .flag { $0.show.fail = true }),
            (["--check-status"], .flag { $0.show.checkStatus = true }),
            (["-w", "--write-out"], one { $0.show.writeOut = $1 }),
            (["--pretty"], one { $0.show.pretty = $1 }),
            (["--max-filesize"], one { $0.show.maxFilesize = $1 }),
            (["-v", "--verbose"], .flag { $0.show.verbose = true }),
            // CacheArguments
            (["--cache"], one { $0.cache.cache = $1 }),
            (["--ttl"], one { $0.cache.ttl = $1 }),
            (["--cache-dir"], one { $0.cache.cacheDir = $1 }),
            (["--cache-store"], one { $0.cache.cacheStore = $1 }),
            // ConnectionOptions
            (["-H", "--header"], one { $0.connection.headers.append($1) }),
            (["-u", "--user"], one { $0.connection.user = $1 }),
            (["--oauth2-bearer"], one { $0.connection.bearer = $1 }),
            (["-A", "--user-agent"], one { $0.connection.userAgent = $1 }),
            (["-x", "--proxy"], one { $0.connection.proxy = $1 }),
            (["--cacert"], one { $0.connection.cacert = $1 }),
            (["--cert"], one { $0.connection.cert = $1 }),
            (["--key"], one { $0.connection.key = $1 }),
            (["--pin"], one { $0.connection.pin.append($1) }),
            (["-k", "--insecure"], .flag { $0.connection.insecure = true }),
            (["-b", "--cookie"], one { $0.connection.cookie = $1 }),
            (["-c", "--cookie-jar"], one { $0.connection.cookieJar = $1 }),
            (["--resolve"], one { $0.connection.resolve.append($1) }),
            (["--har"], one { $0.connection.har = $1 }),
            (["--http2"], .flag { $0.connection.http2 = true }),
            (["--http1.1"], .flag { $0.connection.http11 = true }),
            (["-m", "--max-time", "--timeout"], one { $0.connection.timeout = $1 }),
            (["--read-timeout"], one { $0.connection.readTimeout = $1 }),
            (["--connect-timeout"], one { $0.connection.connectTimeout = $1 }),
            (["--retries"], number { $0.connection.retries = $1 }),
            (["--max-redirs"], number { $0.connection.maxRedirects = $1 }),
            (["-L", "--location"], .flag { $0.connection.followsRedirects = true }),
            (["--compressed"], .flag { $0.connection.compressed = true }),
        ]
        return Dictionary(uniqueKeysWithValues: table.flatMap { names, setter in names.map { ($0, setter) } })
    }

    /// Every name the table knows, for the test that compares it with swift-argument-parser's.
    static var names: Set<String> { Set(setters().keys) }
}

extension RequestSettings {
    /// Every group's `validate()` and then the request's own, as swift-argument-parser runs them after a parse.
    func validateAll() throws {
        try body.validate()
        try show.validate()
        try cache.validate()
        try connection.validate()
        try validate()
    }
}
