#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Which downloads a ``DownloadManager`` operation applies to.
///
/// Naming one download by handle is strict: an operation that does not apply to it (pausing a completed
/// download) throws ``CourierError/Code/invalidState``. The other selections apply to every download for which
/// the operation makes sense and skip the rest.
public enum DownloadSelection: Sendable {
    /// One download.
    case download(Download)
    /// These downloads.
    case downloads([Download])
    /// Every download of this URL.
    case url(URL)
    /// The download with this key (``DownloadOptions/key``), if there is one.
    case key(String)
    /// Every download of the manager.
    case all
}
