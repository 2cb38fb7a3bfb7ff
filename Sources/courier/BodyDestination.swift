import Courier
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc

private let systemUmask = Glibc.umask
#elseif canImport(Darwin)
import Darwin

private let systemUmask = Darwin.umask
#endif

/// Where a response body goes as it arrives: standard output, or `-o FILE` through a temporary file beside it that
/// is renamed into place only when the body is whole, so an interrupted or failed transfer never leaves a half
/// file under the final name. Write failures are ``OutputFailure``s (exit 23).
///
/// `-o` never replaces what its path names with something else: a symbolic link is written through (the file it
/// points to is replaced, the link stays), and a path that names no regular file (`/dev/null`, a FIFO) or one of
/// the process's own open files (`/dev/stdout`, `/proc/self/fd/N`) is written to directly, as curl does.
final class BodyDestination {
    private let descriptor: Int32
    /// For `-o` to a regular file: the temporary file and the final path.
    private let file: (temporary: String, final: String)?
    /// For `-o` to a path that is no regular file: the path, for messages.
    private let device: String?
    private var isOpen = true

    /// Whether the body goes to a path given with `-o` (a file, or a device such as `/dev/null`).
    var isFile: Bool { file != nil || device != nil }

    /// Writes to standard output; a closed pipe is a write error (``Output/ignoreBrokenPipes()``).
    static func standardOutput() -> BodyDestination {
        BodyDestination(descriptor: STDOUT_FILENO, file: nil)
    }

    /// Writes to a new temporary file beside `path` (`.NAME.courier-XXXXXX`), renamed to `path` by ``finish()``;
    /// through a symbolic link to the file it names, and straight to a path that is no regular file.
    static func file(_ path: String) throws -> BodyDestination {
        signal(SIGXFSZ, SIG_IGN)  // past a file size limit, writes fail with EFBIG, told as a write error
        let direct: Int32?
        do { direct = try AtomicFile.openDirectly(path) } catch {
            throw OutputFailure(message: "cannot write \"\(path)\": \(error.description)")
        }
        if let direct { return BodyDestination(descriptor: direct, file: nil, device: path) }
        return try temporaryFile(replacing: try SymbolicLink.target(of: path))
    }

    /// Appends to the file at `path` (curl's `-C -`, which goes on from the bytes already there): no temporary
    /// file, and what was appended stays when the transfer fails, since it continues the file's bytes.
    static func appending(to path: String) throws -> BodyDestination {
        signal(SIGXFSZ, SIG_IGN)
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw OutputFailure(message: "cannot write \"\(path)\": \(String(cString: strerror(errno)))")
        }
        return BodyDestination(descriptor: descriptor, file: nil, device: path)
    }

    /// A temporary file beside the regular file (or the place for one) at `path`.
    private static func temporaryFile(replacing path: String) throws -> BodyDestination {
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
        return BodyDestination(descriptor: descriptor, file: (temporary, path), device: nil)
    }

    private init(descriptor: Int32, file: (temporary: String, final: String)?, device: String? = nil) {
        self.descriptor = descriptor
        self.file = file
        self.device = device
    }

    deinit {
        abandon()
        if device != nil { _ = close(descriptor) }
    }

    /// Whether this is a terminal (standard output on one).
    var isTerminal: Bool { file == nil && device == nil && isatty(descriptor) != 0 }

    /// Writes every byte of `buffer`.
    func write(_ buffer: ByteBuffer) throws {
        try buffer.withUnsafeReadableBytes { try write($0) }
    }

    /// Writes every byte of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let failure = DescriptorWrite.all(bytes, to: descriptor) else { return }
        guard let path = file?.final ?? device else { throw OutputFailure.standardOutput(errno: failure) }
        throw OutputFailure(message: "cannot write \"\(path)\": \(String(cString: strerror(failure)))")
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

/// Where a chain of symbolic links ends, so `-o` replaces the file a link names and keeps the link.
enum SymbolicLink {
    /// The path `path` names once every symbolic link on its last component is followed: itself when it is no
    /// link, and the target of a dangling link (which `-o` then creates, as curl does). Throws ``OutputFailure``
    /// for a loop.
    static func target(of path: String) throws -> String {
        do { return try AtomicFile.target(of: path) } catch {
            throw OutputFailure(message: "cannot write \"\(path)\": too many levels of symbolic links")
        }
    }
}
