import Crypto

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

/// The secret a ``DiskCacheStore`` authenticates its entries with (HMAC-SHA256): 32 random bytes in `sealing-key`
/// beside them, readable by their owner only. Another user who can write the directory cannot make an entry the
/// store accepts: without the key, a forged or altered file is a miss.
enum CacheSealingKey {
    static let fileName = "sealing-key"
    private static let byteCount = 32

    /// The directory's key, made on first use. Made under a temporary name and linked into place, so two processes
    /// opening a new store at once agree on one key; a damaged key file is replaced (its entries become misses).
    static func load(in directory: URL) throws -> SymmetricKey {
        let path = directory.appendingPathComponent(fileName).path(percentEncoded: false)
        if let key = read(path) { return key }
        let key = SymmetricKey(size: .bits256)
        let temp = directory.appendingPathComponent(".\(fileName).\(UInt64.random(in: 0...UInt64.max)).tmp").path(
            percentEncoded: false
        )
        let bytes = key.withUnsafeBytes { Data($0) }
        guard FileManager.default.createFile(atPath: temp, contents: bytes, attributes: [.posixPermissions: 0o600])
        else {
            throw CourierError(code: .fileAccess, message: "cannot create the cache's key in \(directory.path)")
        }
        defer { unlink(temp) }
        if link(temp, path) == 0 { return key }
        if errno == EEXIST, let existing = read(path) { return existing }  // another process made it first
        guard rename(temp, path) == 0 else {
            throw CourierError(
                code: .fileAccess,
                message: "cannot store the cache's key in \(directory.path): \(SystemErrorText.text(of: errno))"
            )
        }
        return key
    }

    private static func read(_ path: String) -> SymmetricKey? {
        guard let data = RegularFile.contents(of: path, maximumSize: byteCount), data.count == byteCount else {
            return nil
        }
        return SymmetricKey(data: data)
    }
}
