#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file opened only when it is what a store expects: a regular file, not a symbolic link (`O_NOFOLLOW`), not a
/// FIFO or a device that could block a read forever (`O_NONBLOCK`, then `fstat`), and no larger than the store
/// ever writes, so a planted 2 GB file is refused before a byte of it is read.
final class RegularFile {
    private let descriptor: Int32
    /// The file's size in bytes.
    let size: Int

    /// Opens `path` for reading; `nil` when it is missing, not a regular file, or larger than `maximumSize`.
    init?(path: String, maximumSize: Int) {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size >= 0,
            Int(info.st_size) <= maximumSize
        else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
        self.size = Int(info.st_size)
    }

    deinit { close(descriptor) }

    /// The next `count` bytes, or fewer at the end of the file; `nil` when reading fails.
    func read(upTo count: Int) -> Data? {
        guard count > 0 else { return Data() }
        var data = Data(count: count)
        var done = 0
        while done < count {
            let result = data.withUnsafeMutableBytes { bytes in
                systemRead(descriptor, bytes.baseAddress! + done, count - done)  // count > 0, so the base exists
            }
            if result < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if result == 0 { break }
            done += result
        }
        return done == count ? data : data.prefix(done)
    }

    /// The whole file at `path` under the same rules; `nil` when any fails.
    static func contents(of path: String, maximumSize: Int) -> Data? {
        guard let file = RegularFile(path: path, maximumSize: maximumSize), let data = file.read(upTo: file.size),
            data.count == file.size
        else { return nil }
        return data
    }
}

/// The C library's `read`, which ``RegularFile`` hides behind its own.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
