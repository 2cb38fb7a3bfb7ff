import Courier
import Foundation
import NIOCore

#if canImport(Glibc)
import Glibc

private let systemWrite = Glibc.write
private let systemUmask = Glibc.umask
#elseif canImport(Darwin)
import Darwin

private let systemWrite = Darwin.write
private let systemUmask = Darwin.umask
#endif

/// Where a response body goes as it arrives: standard output, or `-o FILE` through a temporary file beside it that
/// is renamed into place only when the body is whole, so an interrupted or failed transfer never leaves a half
/// file under the final name. Write failures are ``OutputFailure``s (exit 23).
final class BodyDestination {
    private let descriptor: Int32
    /// For `-o`: the temporary file and the final path.
    private let file: (temporary: String, final: String)?
    private var isOpen = true

    /// Writes to standard output; a closed pipe is a write error rather than a SIGPIPE.
    static func standardOutput() -> BodyDestination {
        signal(SIGPIPE, SIG_IGN)
        return BodyDestination(descriptor: STDOUT_FILENO, file: nil)
    }

    /// Writes to a new temporary file beside `path` (`.NAME.courier-XXXXXX`), renamed to `path` by ``finish()``.
    static func file(_ path: String) throws -> BodyDestination {
        signal(SIGXFSZ, SIG_IGN)  // past a file size limit, writes fail with EFBIG, told as a write error
        let target = URL(filePath: path)
        let folder = target.deletingLastPathComponent().path(percentEncoded: false)
        guard FileManager.default.isDirectory(atPath: folder) else {
            throw OutputFailure(message: "cannot write \"\(path)\": the directory \(folder) does not exist")
        }
        let prefix: String = folder.hasSuffix("/") ? folder : folder + "/"
        let name = String(target.lastPathComponent.prefix(200))
        var template: [CChar] = Array((prefix + "." + name + ".courier-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        guard descriptor >= 0 else {
            throw OutputFailure(message: "cannot write \"\(path)\": \(String(cString: strerror(errno)))")
        }
        let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        fchmod(descriptor, 0o644 & ~Self.umask)
        return BodyDestination(descriptor: descriptor, file: (temporary, path))
    }

    private init(descriptor: Int32, file: (temporary: String, final: String)?) {
        self.descriptor = descriptor
        self.file = file
    }

    deinit { abandon() }

    /// Whether this is a terminal (standard output on one).
    var isTerminal: Bool { file == nil && isatty(descriptor) != 0 }

    /// Writes every byte of `buffer`.
    func write(_ buffer: ByteBuffer) throws {
        try buffer.withUnsafeReadableBytes { try write($0) }
    }

    /// Writes every byte of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw OutputFailure(
                    message:
                        "cannot write \(file.map { "\"\($0.final)\"" } ?? "to standard output"): \(String(cString: strerror(errno)))"
                )
            }
            offset += written
        }
    }

    /// Writes `text` as UTF-8.
    func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(UnsafeRawBufferPointer($0)) }
    }

    /// Ends the body: for `-o`, renames the file into place. Not synced first, as curl does not sync: the rename
    /// keeps a failed or interrupted transfer from the final name, which is the promise; a durable file after a
    /// power loss is what `courier download` gives.
    func finish() throws {
        guard let file, isOpen else { return }
        isOpen = false
        defer { _ = close(descriptor) }
        guard rename(file.temporary, file.final) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(file.temporary)
            throw OutputFailure(message: "cannot write \"\(file.final)\": \(reason)")
        }
    }

    /// Removes the temporary file of an unfinished `-o` body.
    func abandon() {
        guard let file, isOpen else { return }
        isOpen = false
        _ = close(descriptor)
        unlink(file.temporary)
    }

    /// The process's umask, read without changing it for longer than the call.
    private static var umask: mode_t {
        let mask = systemUmask(0o022)
        _ = systemUmask(mask)
        return mask
    }
}
