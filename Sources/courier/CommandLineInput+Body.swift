import Courier

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

extension CommandLineInput {
    /// A body as curl's `-d` and `--json` take it: `@FILE` streams a file from disk (checked readable now, so a
    /// missing one fails before anything is sent, exit 26), `@-` streams standard input, anything else is the text
    /// itself (for `--json`, checked to be JSON).
    static func body(_ text: String, option: String, contentType: String) throws -> RequestBody {
        guard text.hasPrefix("@") else {
            if contentType == "application/json" { return try UsageError.parsing(option) { try jsonBody(text) } }
            return .bytes(Data(text.utf8), contentType: contentType)
        }
        return try streamed(String(text.dropFirst()), contentType: contentType)
    }

    /// The file at `path` as a body streamed from disk (checked readable now: an ``InputFailure`` before anything
    /// is sent), or standard input streamed in chunks for `-`; `contentType` is given the path.
    ///
    /// A path that is no regular file with a size (a FIFO from `<(…)`, a device, a `/proc` file that says it
    /// has 0 bytes) is read as a stream, as curl reads anything; a read that fails then ends with 26.
    static func streamed(_ path: String, contentType: (String) -> String) throws -> RequestBody {
        if path == "-" { return .stream(FileChunks(url: URL(filePath: "/dev/stdin")), contentType: contentType(path)) }
        try checkReadable(path)
        let url = URL(filePath: path)
        guard let size = FileChunks.readableSize(of: url), size > 0 else {
            return .stream(FileChunks(url: url), contentType: contentType(path))
        }
        return .file(url, contentType: contentType(path))
    }

    /// ``streamed(_:contentType:)`` with one content type whatever the path.
    static func streamed(_ path: String, contentType: String) throws -> RequestBody {
        try streamed(path) { _ in contentType }
    }

    /// The bytes of `path` (`-` reads standard input), read whole; an ``InputFailure`` when it cannot be read.
    static func readData(_ path: String) throws -> Data {
        do {
            guard path == "-" else { return try Data(contentsOf: URL(filePath: path)) }
            var data = Data()
            try FileReading.chunks(of: STDIN_FILENO, chunkSize: 1 << 16) { data.append(contentsOf: $0) }
            return data
        } catch {
            throw InputFailure(path: path, reason: Self.reason(error))
        }
    }

    /// The UTF-8 text of `path` (`-` reads standard input); an ``InputFailure`` when it cannot be read.
    static func readText(_ path: String) throws -> String {
        let data = try readData(path)
        guard let text = String(data: data, encoding: .utf8) else {
            throw InputFailure(path: path, reason: "it is not UTF-8 text")
        }
        return text
    }

    /// Throws an ``InputFailure`` unless `path` is a regular file this process can read.
    static func checkReadable(_ path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw InputFailure(path: path, reason: "no such file")
        }
        guard !FileManager.default.isDirectory(atPath: path) else {
            throw InputFailure(path: path, reason: "it is a directory")
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw InputFailure(path: path, reason: "permission denied")
        }
    }

    private static func reason(_ error: any Error) -> String {
        SystemErrorText.describe(error)
    }
}
