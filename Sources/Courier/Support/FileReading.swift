#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file read from start to end in chunks, with `read(2)`, for the callers that read synchronously (a digest,
/// a count, standard input); FoundationEssentials has no `FileHandle`.
package enum FileReading {
    /// A failed `open` or `read`, with its `errno`.
    package struct Failure: Error, CustomStringConvertible {
        /// The call's `errno`.
        package let code: Int32
        /// The C library's words for it: `No such file or directory`.
        package var description: String { SystemErrorText.text(of: code) }
    }

    /// Hands `body` each chunk (at most `chunkSize` bytes) of the file at `path`, in order, until its end.
    package static func chunks(
        ofFileAt path: String,
        chunkSize: Int = 1 << 20,
        _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Failure(code: errno) }
        defer { _ = close(descriptor) }
        try chunks(of: descriptor, chunkSize: chunkSize, body)
    }

    /// Hands `body` each chunk read from `descriptor` until its end; the descriptor stays open.
    package static func chunks(
        of descriptor: Int32,
        chunkSize: Int = 1 << 20,
        _ body: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        try chunk.withUnsafeMutableBytes { space in
            while true {
                let count = read(descriptor, space.baseAddress, space.count)
                if count == 0 { return }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw Failure(code: errno)
                }
                try body(UnsafeRawBufferPointer(rebasing: space[..<count]))
            }
        }
    }
}
