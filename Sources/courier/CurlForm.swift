import Courier

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// curl's `-F`/`--form`: a `multipart/form-data` body, one part per value, as curl writes them:
///
/// - `name=value`: a text field;
/// - `name=@FILE`: a file, streamed from disk, named by its own name (`;type=TYPE` and `;filename=NAME` after the
///   path set the part's type and name; `@-` reads standard input);
/// - `name=<FILE`: a text field whose value is what the file holds.
enum CurlForm {
    /// The form `values` describe, in their order.
    static func body(_ values: [String]) throws -> RequestBody {
        var form = MultipartFormData()
        for value in values { try add(value, to: &form) }
        return try .multipart(form)
    }

    private static func add(_ value: String, to form: inout MultipartFormData) throws {
        guard let equals = value.firstIndex(of: "="), equals != value.startIndex else {
            throw UsageError(
                option: "-F",
                message: "\"\(CourierError.printable(value, limit: 60))\" is not name=value, name=@FILE or name=<FILE"
            )
        }
        let name = String(value[..<equals])
        let content = value[value.index(after: equals)...]
        try UsageError.parsing("-F") {
            switch content.first {
            case "@":
                let (path, type, fileName) = attributes(content.dropFirst())
                if path == "-" {
                    let data = try CommandLineInput.readData("-")
                    try form.append(data: data, name: name, fileName: fileName ?? "-", contentType: type)
                } else {
                    try CommandLineInput.checkReadable(path)
                    try form.append(file: URL(filePath: path), name: name, fileName: fileName, contentType: type)
                }
            case "<":
                let (path, type, _) = attributes(content.dropFirst())
                try form.append(data: try CommandLineInput.readData(path), name: name, contentType: type)
            default:
                try form.append(field: name, value: String(content))
            }
        }
    }

    /// The path in `@PATH;type=TYPE;filename=NAME`, and the attributes after it (any other `;` is the path's own).
    private static func attributes(_ text: Substring) -> (path: String, type: String?, fileName: String?) {
        var pieces = text.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        var type: String?
        var fileName: String?
        while pieces.count > 1, let last = pieces.last {
            if last.hasPrefix("type=") {
                type = String(last.dropFirst("type=".count))
            } else if last.hasPrefix("filename=") {
                fileName = String(last.dropFirst("filename=".count))
            } else {
                break
            }
            pieces.removeLast()
        }
        return (pieces.joined(separator: ";"), type, fileName)
    }
}
