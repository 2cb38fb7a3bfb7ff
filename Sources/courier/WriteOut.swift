import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// curl's `-w/--write-out FORMAT`: text printed to stdout after the transfer, with `%{variable}` replaced by a
/// fact about it and `\n`, `\r`, `\t` and `\\` by what they stand for. A name it does not know is a usage error.
struct WriteOut {
    /// What the variables report.
    struct Facts {
        var statusCode: Int
        var totalSeconds: Double
        var startTransferSeconds: Double
        var downloadedBytes: Int64
        var effectiveURL: String
        var redirects: Int
        var contentType: String
        var httpVersion: String
        /// When the connection was connected, secured, and the request sent, in seconds from the start; 0 where no
        /// figure exists (a connection ready before the call, a TLS connection's connect, a failure before the head
        /// went out).
        var connectSeconds = 0.0
        var appConnectSeconds = 0.0
        var preTransferSeconds = 0.0
        /// Connections opened, redirects' included.
        var connects = 0
        var remote: ConnectionFacts.Endpoint?
        var local: ConnectionFacts.Endpoint?

        /// Takes the connection's figures from `timing`, counted from `start` (the command's, as the other times).
        mutating func note(_ timing: Timing, since start: ContinuousClock.Instant) {
            let seconds = { (instant: ContinuousClock.Instant?) in instant.map { start.duration(to: $0).seconds } }
            guard let connection = timing.connection else { return }
            connects = timing.connectionsOpened
            (remote, local) = (connection.remote, connection.local)
            preTransferSeconds = seconds(connection.requestSent) ?? 0
            guard connection.ready >= timing.start else { return }
            connectSeconds = seconds(connection.connected) ?? 0
            appConnectSeconds = connection.isSecure ? seconds(connection.ready) ?? 0 : 0
        }
    }

    /// The variables it knows, in the order the help lists them.
    static let variables = [
        "http_code", "response_code", "time_total", "time_starttransfer", "size_download", "url_effective",
        "num_redirects", "content_type", "http_version", "time_connect", "time_appconnect", "time_pretransfer",
        "num_connects", "remote_ip", "remote_port", "local_ip", "local_port",
    ]

    private enum Part {
        case text(String)
        case variable(String)
    }
    private let parts: [Part]

    /// The longest format a file may hold, in bytes.
    static let maxFileBytes = 64 << 10

    /// Parses `-w`'s argument as curl does: `@FILE` reads the format from FILE (`@-` from stdin), anything else is
    /// the format. An unreadable file is an ``InputFailure``.
    init(argument: String) throws {
        guard argument.hasPrefix("@") else {
            try self.init(argument)
            return
        }
        let path = String(argument.dropFirst())
        let format = try CommandLineInput.readText(path)
        guard format.utf8.count <= Self.maxFileBytes else {
            throw UsageError(option: "-w", message: "the format in \(path) is longer than 64 KiB")
        }
        try self.init(format)
    }

    /// Parses `format`; throws a ``UsageError`` for an unknown or unclosed `%{…}`.
    init(_ format: String) throws {
        var parts: [Part] = []
        var text = ""
        var rest = Substring(format)
        while let first = rest.first {
            if rest.hasPrefix("%{") {
                guard let close = rest.firstIndex(of: "}") else {
                    throw UsageError(option: "-w", message: "\"%{\" is not closed by \"}\"")
                }
                let name = String(rest[rest.index(rest.startIndex, offsetBy: 2)..<close])
                guard Self.variables.contains(name) else {
                    throw UsageError(
                        option: "-w",
                        message: "unknown variable %{\(name)}; known: \(Self.variables.joined(separator: ", "))"
                    )
                }
                parts.append(.text(text))
                text = ""
                parts.append(.variable(name))
                rest = rest[rest.index(after: close)...]
            } else if first == "\\", rest.count > 1 {
                let next = rest[rest.index(after: rest.startIndex)]
                switch next {
                case "n": text += "\n"
                case "r": text += "\r"
                case "t": text += "\t"
                case "\\": text += "\\"
                default: text += "\\" + String(next)
                }
                rest = rest.dropFirst(2)
            } else {
                text.append(first)
                rest = rest.dropFirst()
            }
        }
        parts.append(.text(text))
        self.parts = parts
    }

    /// The text with the variables filled in from `facts`; with `onTerminal`, control characters in the values a
    /// server controls escaped as `-i` escapes its head (``TerminalText``), C1's 8-bit CSI among them.
    func text(_ facts: Facts, onTerminal: Bool) -> String {
        parts.map { part in
            switch part {
            case .text(let text): text
            case .variable(let name):
                onTerminal ? TerminalText.escaped(Self.value(name, facts)) : Self.value(name, facts)
            }
        }.joined()
    }

    private static func value(_ name: String, _ facts: Facts) -> String {
        switch name {
        case "http_code", "response_code":
            (facts.statusCode < 100 ? String(repeating: "0", count: facts.statusCode < 10 ? 2 : 1) : "")
                + String(facts.statusCode)
        case "time_total": facts.totalSeconds.fixedText(6)
        case "time_starttransfer": facts.startTransferSeconds.fixedText(6)
        case "size_download": String(facts.downloadedBytes)
        case "url_effective": facts.effectiveURL
        case "num_redirects": String(facts.redirects)
        case "content_type": facts.contentType
        case "http_version": facts.httpVersion
        case "time_connect": facts.connectSeconds.fixedText(6)
        case "time_appconnect": facts.appConnectSeconds.fixedText(6)
        case "time_pretransfer": facts.preTransferSeconds.fixedText(6)
        case "num_connects": String(facts.connects)
        case "remote_ip": facts.remote?.address ?? ""
        case "remote_port": String(facts.remote?.port ?? 0)
        case "local_ip": facts.local?.address ?? ""
        case "local_port": String(facts.local?.port ?? 0)
        default: ""
        }
    }
}
