import Courier
import Foundation

/// Paths, queries and form bodies: escaping keeps only unreserved characters and `%XX` and reverses exactly; a
/// resolved URL is an absolute http(s) URL with no space or control character; a parameter appended to a URL
/// reads back as itself.
enum URLFuzz {
    private static let unreserved = Set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%".unicodeScalars
    )
    private static let base = URL(string: "https://api.example.com/v1?fixed=1")

    static func run(_ input: FuzzInput) throws(InvariantViolation) {
        let pieces = input.strings(3)
        let (path, key, value) = (pieces[0], pieces[1], pieces[2])

        let escaped = FormEncoding.escape(key)
        try require(
            escaped.unicodeScalars.allSatisfy(unreserved.contains),
            "\(escaped.debugDescription) holds a reserved character"
        )
        try require(escaped.removingPercentEncoding == key, "\(escaped.debugDescription) does not decode to the key")

        guard let base else { return }
        let configuration = Configuration { $0.baseURL = base }
        if let url = try? URLBuilder.resolve(path: path, bases: URLBuilder.Bases(), configuration: configuration) {
            let scheme = url.scheme?.lowercased()
            try require(scheme == "http" || scheme == "https", "\(url) is not http(s)")
            try require(!(url.host() ?? "").isEmpty, "\(url) has no host")
            try require(
                !url.absoluteString.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F },
                "\(url.absoluteString.debugDescription) holds a space or control character"
            )
        }

        let appended = URLBuilder.appending([key: .string(value)], to: base)
        let items = URLComponents(url: appended, resolvingAgainstBaseURL: false)?.queryItems ?? []
        try require(
            items.contains { $0.name == key && ($0.value ?? "") == value },
            "\(key.debugDescription)=\(value.debugDescription) does not read back from \(appended)"
        )
        try require(items.contains { $0.name == "fixed" && $0.value == "1" }, "the URL's own query was lost")
    }
}
