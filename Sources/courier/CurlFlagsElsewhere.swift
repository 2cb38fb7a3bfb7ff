/// curl flags that mean nothing to courier's request commands, each refused with what to write instead (exit 64),
/// so a curl habit never runs with a different meaning or ends on swift-argument-parser's bare "unknown option".
enum CurlFlagsElsewhere {
    /// The flags, each with what courier does instead.
    static let flags: [(names: [String], instead: String)] = [
        (["-T", "--upload-file"], "uploads go through `courier upload URL --data @FILE --method PUT`"),
        (["-Z", "--parallel"], "parallel requests go through `courier batch FILE --concurrency N`"),
        (["-r", "--range"], "ask for a range with -H 'Range: bytes=START-END'"),
        (["-e", "--referer"], "send it with -H 'Referer: URL'"),
        (["-K", "--config"], "courier reads no config file; put the options on the line"),
        (["-#", "--progress-bar"], "a progress bar shows by itself when -o writes from a terminal"),
        (["-N", "--no-buffer"], "courier writes each chunk as it arrives already"),
        (["-4", "--ipv4", "-6", "--ipv6"], "courier connects as the system resolves the name"),
        (["--limit-rate"], "courier download and courier upload take --limit-rate"),
        (["-j", "--junk-session-cookies"], "-b FILE sends the file's session cookies; leave them out of the file"),
        (["-J", "--remote-header-name"], "name the file with -o, or -O for the URL's name"),
    ]

    /// The message for the first such flag in `arguments`; `nil` when there is none.
    static func message(for arguments: [String]) -> String? {
        for argument in arguments {
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            if let flag = flags.first(where: { $0.names.contains(name) }) {
                return "courier: curl's \(name) has no meaning here: \(flag.instead)"
            }
        }
        return nil
    }
}
