#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole-or-nothing file writes: the bytes go to a new temporary file beside the target, which is then renamed
/// over it, so a reader (or a process restarted after a kill) sees the old file or the new one, never a mix.
package enum AtomicFile {
    /// A failed system call, with the path and the reason.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        /// The `errno` of the failed call.
        package let code: Int32
    }

    /// Writes `data` to `url` atomically with the given permissions. With `durable`, the file is flushed to
    /// the disk before the rename, so a power cut cannot leave an empty file under the final name.
    /// `userNamed` as ``Writer/init(for:permissions:userNamed:)`` has it.
    package static func write(
        _ data: Data,
        to url: URL,
        permissions: UInt32 = 0o600,
        durable: Bool = false,
        userNamed: Bool = false
    ) throws {
        let writer = try Writer(for: url, permissions: permissions, userNamed: userNamed)
        do { try writer.append(data) } catch {
            writer.abandon()
            throw error
        }
        try writer.commit(durable: durable)  // which cleans up after itself
    }

    /// A whole-or-nothing file written in parts: each ``append(_:)`` goes to the temporary file beside the target,
    /// and ``commit(durable:)`` renames it into place. Until then the target is untouched; ``abandon()`` removes the
    /// temporary file. Use it from one thread at a time.
    ///
    /// A path the user named (`userNamed`: a HAR file, a cookie jar) is never replaced by something else, the rule
    /// `courier -o` follows: a symbolic link is written through (the file it points to is replaced, the link stays),
    /// and a path that names no regular file (`/dev/null`, a FIFO) or one of the process's own open files
    /// (`/dev/stdout`, `/proc/self/fd/N`) is written to directly, without a temporary file: whole-or-nothing holds
    /// for regular files only. Courier's own files (the cache's, the downloads' records) are always replaced by
    /// name, so a link planted among them leads nowhere.
    package struct Writer: Sendable {
        private let descriptor: Int32
        /// The temporary file, for a regular file (or none yet); `nil` when writing straight to the target.
        private let temp: URL?
        private let target: URL

        /// Creates the temporary file for `url`, readable and writable as `permissions` say; or, for a path the user
        /// named that names no regular file, opens it to write to directly.
        package init(for url: URL, permissions: UInt32 = 0o600, userNamed: Bool = false) throws {
            let resolved = userNamed ? try AtomicFile.target(of: url.path(percentEncoded: false)) : url.path
            target = userNamed ? URL(filePath: resolved) : url
            if userNamed {
                let direct: Int32?
                do { direct = try AtomicFile.openDirectly(resolved) } catch {
                    throw Failure(description: "cannot write \(resolved): \(error.description)", code: error.code)
                }
                if let direct {
                    temp = nil
                    descriptor = direct
                    return
                }
            }
            // "." + name + "." + at most 20 digits + ".tmp": a long name gets a short stand-in, so any name that fits
            // fits here.
            let base = FileNameLimit.base(for: target.lastPathComponent, suffixBytes: 26)
            let temp = target.deletingLastPathComponent().appendingPathComponent(
                ".\(base).\(UInt64.random(in: 0...UInt64.max)).tmp"
            )
            self.temp = temp
            descriptor = open(temp.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode_t(permissions))
            guard descriptor >= 0 else { throw failure("cannot create", temp) }
        }

        /// Writes `data` at the end of the temporary file.
        package func append(_ data: Data) throws {
            try data.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    // count > 0, so the base exists
                    let written = systemWrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw failure("cannot write", temp ?? target)
                    }
                    offset += written
                }
            }
        }

        /// Closes the temporary file and renames it over the target; with `durable`, flushed to the disk first, so
        /// a power cut cannot leave an empty file under the final name. On failure the temporary file is removed.
        package func commit(durable: Bool = false) throws {
            guard let temp else {
                guard close(descriptor) == 0 else { throw failure("cannot close", target) }
                return
            }
            if durable, fsync(descriptor) != 0 {
                let error = failure("cannot flush", temp)
                abandon()
                throw error
            }
            guard close(descriptor) == 0 else {
                let error = failure("cannot close", temp)
                unlink(temp.path)
                throw error
            }
            guard rename(temp.path, target.path) == 0 else {
                let error = failure("cannot rename into place", target)
                unlink(temp.path)
                throw error
            }
        }

        /// Closes and removes the temporary file; the target stays as it was (written straight to, it keeps what
        /// went).
        package func abandon() {
            close(descriptor)
            if let temp { unlink(temp.path) }
        }
    }

    /// The path `path` names once every symbolic link on its last component is followed: itself when it is no
    /// link, and the target of a dangling link (which is then created). Throws for a loop past the kernel's 40.
    /// `courier -o` follows links by the same rule.
    package static func target(of path: String) throws -> String {
        var current = path
        for _ in 0..<40 {
            var status = stat()
            guard lstat(current, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return current }
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let length = readlink(current, &buffer, buffer.count - 1)
            guard length > 0 else { return current }
            let link = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            current =
                link.hasPrefix("/")
                ? link
                : URL(filePath: current).deletingLastPathComponent().appending(path: link).path(percentEncoded: false)
        }
        throw Failure(description: "cannot write \(path): too many levels of symbolic links", code: ELOOP)
    }

    /// Whether `name` is one of the temporary files ``write(_:to:permissions:durable:)`` leaves if the process
    /// dies between creating and renaming it.
    package static func isLeftover(_ name: String) -> Bool {
        name.hasPrefix(".") && name.hasSuffix(".tmp")
    }

    /// The rule for a path the user named (`courier -o`, `--har`, `-c`): one that names no regular file (`/dev/null`,
    /// a FIFO, a terminal) or one of the process's own open files (`/dev/stdout`, `/proc/self/fd/N`, whatever the
    /// kernel makes them) is opened here to be written to directly, as curl does, instead of being replaced by a
    /// file. `nil` for a regular file or a path that does not exist yet, which are written whole through a
    /// temporary file. Throws for a directory (`EISDIR`) or a failed `open`, with the reason alone.
    package static func openDirectly(_ path: String) throws(Failure) -> Int32? {
        var status = stat()
        let isProcessFile = ["/dev/", "/proc/"].contains { path.hasPrefix($0) }
        guard stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG || isProcessFile else { return nil }
        guard status.st_mode & S_IFMT != S_IFDIR else { throw Failure(description: "it is a directory", code: EISDIR) }
        let truncates = status.st_mode & S_IFMT == S_IFREG ? O_TRUNC : 0
        let descriptor = open(path, O_WRONLY | truncates | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw Failure(description: SystemErrorText.text(of: code), code: code)
        }
        return descriptor
    }

    private static func failure(_ what: String, _ url: URL) -> Failure {
        let code = errno
        return Failure(description: "\(what) \(url.path): \(SystemErrorText.text(of: code))", code: code)
    }
}

/// The C library's `write`, which the enum's own `write` hides inside it.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
