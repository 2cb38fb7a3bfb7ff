#if canImport(Glibc)
import Glibc

private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin

private let systemWrite = Darwin.write
#endif

/// Every byte of a buffer written to a file descriptor, with the error told rather than trapped: what every write
/// of the CLI goes through, since Foundation's `FileHandle.write` traps on a closed pipe or a full disk.
enum DescriptorWrite {
    /// Writes all of `bytes` to `descriptor`, retrying short writes and interrupted calls; returns `errno` of the
    /// write that failed, or `nil` when every byte went.
    static func all(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while offset < bytes.count {
            let written = systemWrite(descriptor, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }

    /// Writes `text` as UTF-8 to `descriptor`; returns `errno` of a failed write.
    static func all(_ text: String, to descriptor: Int32) -> Int32? {
        var text = text
        return text.withUTF8 { all(UnsafeRawBufferPointer($0), to: descriptor) }
    }
}
