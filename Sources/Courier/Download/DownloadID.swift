import Crypto

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Identifies a download within a manager. It is derived from the destination path, so one file is one
/// download, and the same command run again after a crash finds the same download.
public struct DownloadID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Sixteen hex digits.
    public let rawValue: String

    /// The identifier of the download to `destination`.
    public init(destination: URL) {
        rawValue = String(Hex.string(SHA256.hash(data: Data(destination.standardizedFileURL.path.utf8))).prefix(16))
    }

    /// The hex digits.
    public var description: String { rawValue }
}
