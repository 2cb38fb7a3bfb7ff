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
    package static func write(_ data: Data, to url: URL, permissions: UInt32 = 0o600, durable: Bool = false) throws {
        let writer = try Writer(for: url, permissions: permissions)
        do { try writer.append(data) } catch {
            writer.abandon()
            throw error
        }
        try writer.commit(durable: durable)  // which cleans up after itself
    }

    /// A whole-or-nothing file written in parts: each ``append(_:)`` goes to the temporary file beside the target,
    /// and ``commit(durable:)`` renames it into place. Until then the target is untouched; ``abandon()`` removes the
    /// temporary file. Use it from one thread at a time.
    package struct Writer: Sendable {
        private let descriptor: Int32
        private let temp: URL
        private let target: URL

        /// Creates the temporary file for `url`, readable and writable as `permissions` say.
        package init(for url: URL, permissions: UInt32 = 0o600) throws {
            // "." + name + "." + at most 20 digits + ".tmp": a long name gets a short stand-in, so any name that fits
            // fits here.
            let base = FileNameLimit.base(for: url.lastPathComponent, suffixBytes: 26)
            temp = url.deletingLastPathComponent().appendingPathComponent(
                ".\(base).\(UInt64.random(in: 0...UInt64.max)).tmp"
            )
            target = url
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
                        throw failure("cannot write", temp)
                    }
                    offset += written
                }
            }
        }

        /// Closes the temporary file and renames it over the target; with `durable`, flushed to the disk first, so
        /// a power cut cannot leave an empty file under the final name. On failure the temporary file is removed.
        package func commit(durable: Bool = false) throws {
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

        /// Closes and removes the temporary file; the target stays as it was.
        package func abandon() {
            close(descriptor)
            unlink(temp.path)
        }
    }

    /// Whether `name` is one of the temporary files ``write(_:to:permissions:durable:)`` leaves if the process
    /// dies between creating and renaming it.
    package static func isLeftover(_ name: String) -> Bool {
        name.hasPrefix(".") && name.hasSuffix(".tmp")
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
