import ArgumentParser
import Courier
import HTTPTypes

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The exit codes of `courier`, in one table: the help text and the README list them from here. They are curl's
/// numbers, so a script written for curl reads them the same way: any answer is a success unless `-f` (22) or xh's
/// `--check-status` (3, 4, 5) asks otherwise. A usage error is 64 (sysexits' `EX_USAGE`, swift-argument-parser's
/// own code for a bad option) rather than curl's 2, which curl also uses for a failure to start.
enum ExitStatus: Int32, CaseIterable {
    case success = 0
    case failure = 1
    case redirectStatus = 3
    case clientError = 4
    case serverError = 5
    case unresolvedHost = 6
    case couldNotConnect = 7
    case httpError = 22
    case writeError = 23
    case readError = 26
    case resumeRefused = 33
    case timeout = 28
    case tls = 35
    case tooManyRedirects = 47
    case untrustedCertificate = 60
    case receiveError = 56
    case badContentEncoding = 61
    case bodyTooLarge = 63
    case usage = 64
    case proxyRefused = 97
    case interrupted = 130

    /// What the code means, as the help text and the README say it.
    var meaning: String {
        switch self {
        case .success: "success: an answer of any status (as curl), or the command did its work"
        case .failure: "any other failure, told in one line on stderr"
        case .redirectStatus: "--check-status: a 3xx answer (a redirect not followed)"
        case .clientError: "--check-status: a 4xx answer"
        case .serverError: "--check-status: a 5xx answer"
        case .unresolvedHost: "the host name did not resolve"
        case .couldNotConnect: "could not connect (refused, unreachable)"
        case .httpError: "-f and a 4xx or 5xx answer; download, upload: a 4xx or 5xx refusal"
        case .writeError: "could not write the output (-o, a download, stdout)"
        case .readError: "could not read an input file (@FILE, a list, an upload)"
        case .resumeRefused: "-C -: the server sent the whole body, or another range, not the rest"
        case .timeout: "a timeout (-m, --read-timeout, --connect-timeout)"
        case .tls: "the TLS handshake failed (refused, a pin that does not match)"
        case .tooManyRedirects: "too many redirects (--max-redirs) or a redirect loop"
        case .receiveError: "ws: the server broke the WebSocket protocol"
        case .badContentEncoding: "the body's Content-Encoding could not be decoded"
        case .bodyTooLarge: "the body is larger than --max-filesize"
        case .usage: "a usage error: a bad command, option or value (named)"
        case .proxyRefused: "the proxy refused: credentials wanted or refused, or the host"
        case .untrustedCertificate: "the certificate check failed (an unknown CA, expired, another host's)"
        case .interrupted: "interrupted (Ctrl-C, SIGTERM); no half file is left"
        }
    }

    /// The table as the help text shows it.
    static var table: String {
        allCases.map {
            "  \(String($0.rawValue) + String(repeating: " ", count: max(0, 4 - String($0.rawValue).count)))\($0.meaning)"
        }
        .joined(separator: "\n")
    }

    /// The status xh's `--check-status` gives an answer: 3, 4 or 5 for a 3xx, 4xx or 5xx; `nil` for any other.
    static func checked(status code: Int) -> ExitStatus? {
        switch code {
        case 300..<400: .redirectStatus
        case 400..<500: .clientError
        case 500..<1000: .serverError
        default: nil
        }
    }

    /// Whether `-f` (and a transfer command) fails on this status: a 4xx or a 5xx.
    static func isError(status code: Int) -> Bool { code >= 400 }

    /// The status `error` ends the process with.
    static func of(_ error: any Error) -> ExitStatus {
        switch error {
        case is UsageError: return .usage
        case is InputFailure: return .readError
        case is OutputFailure: return .writeError
        case is Interrupted: return .interrupted
        case is ResumeRefused: return .resumeRefused
        case let error as CourierError: return of(error)
        default: return .failure
        }
    }

    private static func of(_ error: CourierError) -> ExitStatus {
        switch error.code {
        case .connectionFailed where error.isProxyRefusal: .proxyRefused
        case .connectionFailed: error.isUnresolvedHost ? .unresolvedHost : .couldNotConnect
        case .offline: .couldNotConnect
        case .timeout: .timeout
        case .tls: error.isUntrustedCertificate ? .untrustedCertificate : .tls
        case .tooManyRedirects, .redirectLoop: .tooManyRedirects
        case .fileAccess, .diskFull: .writeError
        case .unreadableBody: .readError
        case .decompression: .badContentEncoding
        case .bodyTooLarge: .bodyTooLarge
        case .httpStatus: .httpError
        case .webSocket: error.webSocketCloseCode == .messageTooBig ? .bodyTooLarge : .receiveError
        default: .failure
        }
    }

    /// The exit code for swift-argument-parser.
    var exitCode: ExitCode { ExitCode(rawValue) }
}

/// A value on the command line that cannot be used, with the option that carried it: exit 64.
struct UsageError: Error, CustomStringConvertible {
    let option: String
    let message: String

    var description: String { "\(option): \(message)" }

    /// Runs `parse`, turning what it throws into a usage error naming `option`.
    static func parsing<T>(_ option: String, _ parse: () throws -> T) throws -> T {
        do { return try parse() } catch let error as CourierError {
            throw UsageError(option: option, message: error.message)
        } catch let error as UsageError {
            throw error
        } catch let error as InputFailure {
            throw error  // a file that cannot be read is told as such (26), whichever option named it
        } catch {
            throw UsageError(option: option, message: "\(error)")
        }
    }
}

/// A failure the command tells in its own words: exit 1.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
}

/// An input file (`@FILE`, a list, an upload's source) that cannot be read: exit 26.
struct InputFailure: Error, CustomStringConvertible {
    let path: String
    let reason: String

    var description: String { "cannot read \"\(path)\": \(reason)" }
}

/// Output that cannot be written (stdout closed, `-o` on a full disk or in a missing folder): exit 23.
struct OutputFailure: Error, CustomStringConvertible {
    let message: String
    /// Whether the reader of standard output went away (`| head`): the command ends with 23 and says nothing, as
    /// there is nobody to tell.
    var isClosedPipe = false

    var description: String { message }

    /// Standard output failed with `errno`.
    static func standardOutput(errno: Int32) -> OutputFailure {
        OutputFailure(
            message: "cannot write to standard output: \(SystemErrorText.text(of: errno))",
            isClosedPipe: errno == EPIPE
        )
    }
}

/// `-C -` asked for the rest of a file and the server sent something else: exit 33, the file left as it was.
struct ResumeRefused: Error, CustomStringConvertible {
    let description: String
}

/// The process got SIGINT or SIGTERM while working: exit 130.
struct Interrupted: Error, CustomStringConvertible {
    /// What was kept, for the user to know what to do next.
    var detail: String?

    var description: String { "interrupted" + (detail.map { "; " + $0 } ?? "") }
}
