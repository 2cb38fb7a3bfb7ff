#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Safe local file names for downloads, from `Content-Disposition` or the URL.
///
/// A name from the network is hostile until proven otherwise: only its last path component is kept (both `/`
/// and `\` count as separators), control characters (C0, DEL, C1) are dropped, leading dots and white space are
/// removed (no hidden files, no `..`), and it is cut to 255 bytes. What is left always names a file directly inside the chosen
/// directory; an empty result falls back to `download`.
public enum DownloadFileName {
    /// The name to save a download under: the `Content-Disposition` name when there is one, else the URL's
    /// last path component, sanitised.
    public static func suggested(contentDisposition: String?, url: URL) -> String {
        if let contentDisposition, let name = fromContentDisposition(contentDisposition).map(sanitize), name != fallback
        {
            return name
        }
        let component = url.path(percentEncoded: false).split(separator: "/").last.map(String.init) ?? ""
        return sanitize(component)
    }

    /// `directory/name`, checked to stay directly inside `directory`.
    public static func destination(for name: String, in directory: URL) throws -> URL {
        let safe = sanitize(name)
        let folder = directory.standardizedFileURL
        let file = folder.appendingPathComponent(safe, isDirectory: false).standardizedFileURL
        guard file.deletingLastPathComponent().path == folder.path else {
            throw CourierError(
                code: .fileAccess,
                message: "the file name \"\(CourierError.printable(name))\" leaves the download directory"
            )
        }
        return file
    }

    /// Makes `name` safe as a single file name.
    ///
    /// Works on Unicode scalars, not Characters: a `/` or `.` followed by a combining mark is a single Character
    /// that compares unequal to `/` or `.`, yet the file system still sees the separator or the leading dot.
    public static func sanitize(_ name: String) -> String {
        let lastComponent = name.unicodeScalars.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last ?? []
        var kept = lastComponent.filter { $0.properties.generalCategory != .control }
        while let first = kept.first, first == "." || first.properties.isWhitespace { kept.removeFirst() }
        var bytes = kept.reduce(0) { $0 + UTF8.width($1) }
        while bytes > 255, let last = kept.popLast() { bytes -= UTF8.width(last) }
        while let last = kept.last, last.properties.isWhitespace { kept.removeLast() }
        var cleaned = String.UnicodeScalarView()
        cleaned.append(contentsOf: kept)
        return cleaned.isEmpty ? fallback : String(cleaned)
    }

    static let fallback = "download"

    /// The file name a `Content-Disposition` header names: `filename*` (RFC 5987, UTF-8) before `filename`.
    static func fromContentDisposition(_ header: String) -> String? {
        var plain: String?
        var extended: String?
        for parameter in HeaderParameters.parse(header) {
            switch parameter.name {
            case "filename*":
                let parts = parameter.value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
                if parts.count == 3, parts[0].lowercased() == "utf-8" {
                    extended = PercentEncoding.decode(parts[2])
                }
            case "filename": plain = parameter.value
            default: continue
            }
        }
        return extended ?? plain
    }
}
