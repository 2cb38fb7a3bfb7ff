/// Content types whose bodies are compressed already, so zlib would only spend time on them; shared by the
/// disk cache and the upload compressor.
enum CompressedContentTypes {
    static let prefixes = [
        "image/jpeg", "image/png", "image/gif", "image/webp", "image/avif", "image/heic", "video/", "audio/",
        "application/zip", "application/gzip", "application/x-gzip", "application/zstd",
        "application/x-7z-compressed", "application/x-rar", "application/x-xz", "application/x-bzip2",
        "font/woff", "font/woff2", "application/pdf",
    ]

    /// Whether `contentType` names one of them (parameters and case ignored).
    static func contains(_ contentType: String?) -> Bool {
        guard let type = contentType?.lowercased() else { return false }
        return prefixes.contains { type.hasPrefix($0) }
    }
}
