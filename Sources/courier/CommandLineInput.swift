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

/// Parsers for request parts written as text, as on a command line (`-H 'K: V'`, `--param k=v`, `--json '{…}'`).
/// Each rejects bad input with a ``CourierError`` that says what was wrong, and never echoes a header value.
enum CommandLineInput {
    /// `Name: value` as a validated header field.
    static func header(_ line: String) throws -> HTTPField {
        guard let colon = line.firstIndex(of: ":") else {
            throw CourierError.invalidHeader(
                name: line.count > 60 ? String(line.prefix(60)) + "…" : line,
                reason: "is not of the form 'Name: value'"
            )
        }
        let name = String(line[..<colon])
        let value = line[line.index(after: colon)...].trimmingOWS()
        return try HeaderValidation.field(name: name, value: value)
    }

    /// `key=value` pairs as parameters; a repeated key collects its values into an array.
    static func parameters(_ pairs: [String]) throws -> Parameters {
        try parameters(named: namedValues(pairs))
    }

    /// `key=value` pairs split at their first `=`.
    static func namedValues(_ pairs: [String]) throws -> [(name: String, value: String)] {
        try pairs.map { pair in
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw CourierError(
                    code: .invalidParameter,
                    message: "parameter \"\(CourierError.printable(pair))\" is not of the form key=value"
                )
            }
            return (String(pair[..<equals]), String(pair[pair.index(after: equals)...]))
        }
    }

    /// Named values as parameters; a repeated name collects its values into an array.
    static func parameters(named pairs: [(name: String, value: String)]) throws -> Parameters {
        var parameters = Parameters()
        for (key, text) in pairs {
            let value = ParameterValue.string(text)
            switch parameters[key] {
            case nil: parameters[key] = value
            case .array(let values)?: parameters[key] = .array(values + [value])
            case let existing?: parameters[key] = .array([existing, value])
            }
        }
        return parameters
    }

    /// JSON text as a body, checked to be valid JSON first.
    static func jsonBody(_ text: String) throws -> RequestBody {
        let data = Data(text.utf8)
        guard ParameterValue.isJSON(data) else {
            throw CourierError(code: .encoding, message: "the JSON body is not valid JSON")
        }
        return .bytes(data, contentType: "application/json")
    }

    /// An absolute http(s) URL. Without a scheme, `http://` is assumed, as curl does (`127.0.0.1:8080/echo`,
    /// `example.com`); a scheme missing its colon (`http//host`) or a bare path is refused with what to write instead.
    static func url(_ text: String) throws -> URL {
        try URLBuilder.validateCharacters(text)
        if let url = URLBuilder.absoluteURL(text) { return url }
        guard !text.contains("://") else { throw CourierError.invalidURL(text) }
        if let slashes = text.firstRange(of: "//"), text[..<slashes.lowerBound].allSatisfy({ $0.isLetter }),
            !text[..<slashes.lowerBound].isEmpty
        {
            let suggestion = text[..<slashes.lowerBound] + "://" + text[slashes.upperBound...]
            throw CourierError.invalidURL(
                text,
                reason: "the scheme is missing its colon (did you mean \(CourierError.printable(String(suggestion))))"
            )
        }
        guard let first = text.first, first.isLetter || first.isNumber || first == "[" else {
            throw CourierError.invalidURL(text, reason: "a URL needs a host, such as http://127.0.0.1:8080/path")
        }
        guard let url = URLBuilder.absoluteURL("http://" + text) else { throw CourierError.invalidURL(text) }
        return url
    }

    /// curl's `--resolve HOST:PORT:ADDR` as the host name and the numeric address its connections go to (an IPv6
    /// address may be bracketed). curl's wildcard host, address lists and `+` entries are refused by name.
    static func hostAddress(_ entry: String) throws -> (host: String, address: String) {
        let refuse = { (reason: String) in
            CourierError(code: .invalidParameter, message: "\"\(CourierError.printable(entry, limit: 80))\" \(reason)")
        }
        let parts = entry.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, !parts[0].isEmpty else { throw refuse("is not HOST:PORT:ADDR") }
        guard !parts[0].hasPrefix("+"), parts[0] != "*" else {
            throw refuse("uses a form of curl's --resolve that courier does not take (a '+' entry or the '*' host)")
        }
        guard let port = Int(parts[1]), (1...65_535).contains(port) else { throw refuse("has no port from 1 to 65535") }
        var address = parts[2]
        if address.hasPrefix("["), address.hasSuffix("]") { address = String(address.dropFirst().dropLast()) }
        guard !address.contains(",") else { throw refuse("lists several addresses; give one") }
        var ipv4 = in_addr()
        var ipv6 = in6_addr()
        guard inet_pton(AF_INET, address, &ipv4) == 1 || inet_pton(AF_INET6, address, &ipv6) == 1 else {
            throw refuse("does not end in a numeric IPv4 or IPv6 address")
        }
        return (parts[0].lowercased(), address)
    }

    /// Seconds as a duration; rejects negative numbers, zero (unless `allowingZero`) and non-numbers.
    static func seconds(_ text: String, allowingZero: Bool = false) throws -> Duration {
        guard let value = Double(text), value > 0 || allowingZero && value == 0, value.isFinite, value < 1e9 else {
            throw CourierError(
                code: .invalidParameter,
                message:
                    "\"\(CourierError.printable(text))\" is not a \(allowingZero ? "" : "positive ")number of seconds"
            )
        }
        return .milliseconds(Int64(value * 1000))
    }

    /// A rate such as `500K`, `2M`, `1.5MiB` or `1048576` in bytes per second, as curl's `--limit-rate` takes it
    /// (K, M and G are powers of 1024, also written KiB, MiB and GiB; a trailing `B` or `/s` is allowed).
    static func byteRate(_ text: String) throws -> Int {
        guard let bytes = byteCount(text, suffixes: ["/s", "b"]) else {
            throw CourierError(
                code: .invalidParameter,
                message: "\"\(CourierError.printable(text))\" is not a rate such as 500K or 2M"
            )
        }
        return bytes
    }

    /// A size such as `64K`, `1.5M`, `2MiB` or `1000` in bytes (K, M and G are powers of 1024, also written KiB,
    /// MiB and GiB; a trailing `B` is allowed).
    static func byteSize(_ text: String) throws -> Int {
        guard let bytes = byteCount(text, suffixes: ["b"]) else {
            throw CourierError(
                code: .invalidParameter,
                message: "\"\(CourierError.printable(text))\" is not a size such as 64K or 2M"
            )
        }
        return bytes
    }

    /// A positive byte count written with an optional K/M/G factor and then one of `suffixes`; `nil` if it is not one.
    private static func byteCount(_ text: String, suffixes: [String]) -> Int? {
        var number = text.trimmingSpaces().lowercased()
        for suffix in suffixes where number.hasSuffix(suffix) { number.removeLast(suffix.count) }
        if number.hasSuffix("ki") || number.hasSuffix("mi") || number.hasSuffix("gi") { number.removeLast() }
        var factor = 1.0
        if let last = number.last, let power = ["k": 1.0, "m": 2.0, "g": 3.0][String(last)] {
            factor = pow(1024, power)
            number.removeLast()
        }
        guard let value = Double(number), value.isFinite, value > 0, value * factor >= 1, value * factor < 1e15 else {
            return nil
        }
        return Int(value * factor)
    }

    /// A download list: one absolute URL per line; blank lines and lines starting with `#` are skipped.
    static func urlList(_ text: String) throws -> [URL] {
        var urls: [URL] = []
        for (number, trimmed) in listLines(text) {
            do { urls.append(try url(trimmed)) } catch let error as CourierError {
                throw CourierError(code: error.code, message: "line \(number): \(error.message)")
            }
        }
        guard !urls.isEmpty else { throw CourierError(code: .invalidParameter, message: "the list holds no URL") }
        return urls
    }

    /// A batch file: one request per line, `METHOD URL` or just `URL` (GET); blank lines and lines starting with
    /// `#` are skipped. A bad line fails with an error naming its number.
    static func batchRequests(_ text: String) throws -> [Request<Data>] {
        var requests: [Request<Data>] = []
        for (number, trimmed) in listLines(text) {
            let words = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard words.count <= 2 else {
                throw CourierError(code: .invalidParameter, message: "line \(number): expected 'METHOD URL' or 'URL'")
            }
            let method: HTTPRequest.Method
            if words.count == 2 {
                guard let parsed = HTTPRequest.Method(words[0].uppercased()), words[0].allSatisfy(\.isLetter) else {
                    throw CourierError(
                        code: .invalidParameter,
                        message: "line \(number): \"\(CourierError.printable(words[0]))\" is not an HTTP method"
                    )
                }
                method = parsed
            } else {
                method = .get
            }
            let url = words[words.count - 1]
            guard URLBuilder.absoluteURL(url) != nil else {
                throw CourierError.invalidURL(url, reason: "line \(number): not an absolute http(s) URL")
            }
            requests.append(Request<Data>(method: method, path: url))
        }
        return requests
    }

    /// The lines of a list file that say something, numbered from 1: trimmed of spaces, tabs and a CR (files
    /// written on Windows), without blank lines and `#` comments.
    private static func listLines(_ text: String) -> [(number: Int, text: String)] {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
            let trimmed = line.trimming { $0 == "\r" || ($0.isWhitespace && !$0.isNewline) }
            return trimmed.isEmpty || trimmed.hasPrefix("#") ? nil : (index + 1, trimmed)
        }
    }
}
