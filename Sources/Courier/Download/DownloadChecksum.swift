import Crypto

#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// The digest a finished download must have. SHA-256 is the one to use; SHA-1 and MD5 exist for servers that
/// publish nothing better, and only guard against accidents, not attackers.
public struct DownloadChecksum: Sendable, Hashable, CustomStringConvertible {
    /// The hash function.
    public enum Algorithm: String, Sendable, Hashable, Codable {
        /// SHA-256.
        case sha256
        /// SHA-1 (accidents only).
        case sha1
        /// MD5 (accidents only).
        case md5

        var digestLength: Int {
            switch self {
            case .sha256: 32
            case .sha1: 20
            case .md5: 16
            }
        }
    }

    /// The hash function.
    public let algorithm: Algorithm
    /// The expected digest, lowercase hexadecimal.
    public let hex: String

    /// A checksum from a hexadecimal digest; throws ``CourierError/Code/invalidParameter`` when `hex` is not a
    /// digest of that algorithm.
    public init(_ algorithm: Algorithm, hex: String) throws {
        let lowered = hex.lowercased()
        guard lowered.count == algorithm.digestLength * 2, lowered.allSatisfy({ $0.isHexDigit }) else {
            throw CourierError(
                code: .invalidParameter,
                message:
                    "\"\(CourierError.printable(hex, limit: 80))\" is not a \(algorithm.rawValue) digest (\(algorithm.digestLength * 2) hex digits)"
            )
        }
        self.algorithm = algorithm
        self.hex = lowered
    }

    /// A checksum as ``description`` writes it (`sha256:ab12…`); throws ``CourierError/Code/invalidParameter``
    /// for anything else.
    package init(stored text: String) throws {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let algorithm = Algorithm(rawValue: parts[0]) else {
            throw CourierError(
                code: .invalidParameter,
                message:
                    "\"\(CourierError.printable(text, limit: 80))\" is not ALGORITHM:HEX with ALGORITHM sha256, sha1 or md5"
            )
        }
        try self.init(algorithm, hex: parts[1])
    }

    /// A SHA-256 checksum.
    public static func sha256(_ hex: String) throws -> DownloadChecksum { try DownloadChecksum(.sha256, hex: hex) }

    /// `sha256:ab12…`.
    public var description: String { "\(algorithm.rawValue):\(hex)" }

    /// The digest of the file at `url`, read in 1 MiB chunks.
    static func digest(of url: URL, algorithm: Algorithm) throws -> String {
        switch algorithm {
        case .sha256: try digest(of: url, using: SHA256.self)
        case .sha1: try digest(of: url, using: Insecure.SHA1.self)
        case .md5: try digest(of: url, using: Insecure.MD5.self)
        }
    }

    private static func digest<Hash: HashFunction>(of url: URL, using _: Hash.Type) throws -> String {
        var hasher = Hash()
        do {
            try FileReading.chunks(ofFileAt: url.path(percentEncoded: false)) { hasher.update(bufferPointer: $0) }
        } catch {
            throw CourierError(code: .fileAccess, message: "cannot read \(url.path) to verify it: \(error)")
        }
        return Hex.string(hasher.finalize())
    }

    /// Throws ``CourierError/Code/integrity`` unless the file at `url` has this digest.
    package func verify(_ url: URL) throws {
        let actual = try Self.digest(of: url, algorithm: algorithm)
        guard actual == hex else {
            throw CourierError(
                code: .integrity,
                message: "\(algorithm.rawValue) mismatch: expected \(hex), got \(actual)"
            )
        }
    }
}
