/// Media types for common file extensions, for upload parts that do not name their own.
package enum MIMEType {
    private static let byExtension: [String: String] = [
        "txt": "text/plain", "html": "text/html", "htm": "text/html", "css": "text/css", "csv": "text/csv",
        "js": "text/javascript", "json": "application/json", "xml": "application/xml", "pdf": "application/pdf",
        "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar", "png": "image/png",
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp", "svg": "image/svg+xml",
        "heic": "image/heic", "mp3": "audio/mpeg", "wav": "audio/wav", "mp4": "video/mp4", "mov": "video/quicktime",
        "bin": "application/octet-stream",
    ]

    /// The type for `fileName`'s extension, `application/octet-stream` when unknown.
    package static func forFileName(_ fileName: String) -> String {
        guard let dot = fileName.lastIndex(of: "."), dot != fileName.startIndex else {
            return "application/octet-stream"
        }
        return byExtension[fileName[fileName.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }
}
