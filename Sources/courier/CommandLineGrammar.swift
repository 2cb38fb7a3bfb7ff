import HTTPTypes

/// The first words of a command line as curl and xh users type them, turned into the subcommand swift-argument-parser
/// dispatches on. A line that names a command goes through as it is; otherwise the request command (`get`) runs it:
///
/// - `courier URL …`, `courier -s URL …`, `courier -X PUT URL …`: options anywhere, as curl takes them;
/// - `courier -s put URL …`: request options before a command's name, which goes first (it had become the host);
/// - `courier POST URL …` (xh's method word, in capitals), which the request command reads as the method, as it
///   does after options (`courier -v POST URL`).
///
/// `get` is the command with a default method, as curl and xh have one: GET, or POST when a body is given.
enum CommandLineGrammar {
    /// The arguments to parse for `arguments` as typed (without the program's name); `commands` are the
    /// subcommands' names.
    static func normalized(_ arguments: [String], commands: [String]) -> [String] {
        guard let first = arguments.first else { return arguments }
        if commands.contains(first)
            || ["help", "-h", "--help", "--version", "--generate-completion-script"]
                .contains(first)
        {
            return arguments
        }
        if first.hasPrefix("-"), let count = RequestCommandLine.leadingOptionCount(arguments), count < arguments.count,
            commands.contains(arguments[count])
        {
            var rest = arguments
            let command = rest.remove(at: count)
            return [command] + rest
        }
        if first.hasPrefix("-") || methodWord(first) != nil && arguments.count > 1
            || UnknownCommand.looksLikeURL(first, among: commands)
        {
            return ["get"] + arguments
        }
        return arguments
    }

    /// The method `word` names when it is written as xh writes one (`GET`, `POST`, `PROPFIND`: capital letters
    /// only, a valid method token); `nil` for anything else, so `courier get` stays the command.
    static func methodWord(_ word: String) -> HTTPRequest.Method? {
        guard !word.isEmpty, word.count <= 20, word.allSatisfy({ $0.isASCII && $0.isUppercase }) else { return nil }
        return HTTPRequest.Method(word)
    }
}
