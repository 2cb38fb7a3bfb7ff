public import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a download goes: a file path, or a directory where the name comes from the server.
public enum DownloadDestination: Sendable, Hashable {
    /// Exactly this file.
    case file(URL)
    /// A file in this directory named by `Content-Disposition` (asked for with a `HEAD` request) or the URL;
    /// see ``DownloadFileName``.
    case directory(URL)
}

/// How one download runs. Every field has a default a curl or aria2 user would expect.
public struct DownloadOptions: Sendable, Hashable {
    /// The digest the finished file must have; nothing is moved into place otherwise.
    public var checksum: DownloadChecksum?
    /// Connections for one file (aria2's `-x`); more than one splits a file that accepts ranges into segments.
    public var connections: Int
    /// The smallest segment worth a connection of its own.
    public var minimumSegmentBytes: Int64
    /// Transient failures in a row (connection closed or reset, idle timeout, 5xx) retried before giving up;
    /// any progress resets the count.
    public var retries: Int
    /// The first retry's delay; each further retry doubles it, up to eight seconds.
    public var retryDelay: Duration
    /// The longest silence allowed while bytes are expected.
    public var idleTimeout: Duration
    /// How often the resume record is saved while bytes arrive (it is also saved on pause and on every error).
    public var checkpointInterval: Duration
    /// A limit on this download's rate in bytes per second.
    public var bytesPerSecond: Int?
    /// Whether an existing destination file may be replaced.
    public var overwrites: Bool
    /// Which waiting download starts first.
    public var priority: RequestPriority
    /// Extra request headers (for example `Authorization`); they are not saved in the state directory.
    public var headers: HTTPFields
    /// A name of your own for the download besides its destination (WYNetwork's and XZDownloadTask's identifier):
    /// find it with ``DownloadManager/download(key:)`` or select it with ``DownloadSelection/key(_:)``, also after
    /// a restart, since it is saved in the state directory. One key names one download of a manager.
    public var key: String?
    /// The pool tag of the download's requests, so ``RequestPool/cancelAll(tag:)`` and the pool's snapshot reach
    /// them as any other call's (the pool's ``PooledRequest/userInfo`` also carries the ``key`` under
    /// ``DownloadOptions/keyInfo``). Saved in the state directory with the key. A request the pool cancels ends
    /// the download with ``CourierError/Code/cancelled``, its bytes kept: ``DownloadManager/resume(_:)`` goes on
    /// from them.
    public var tag: String?
    /// Whether an interrupted download keeps its bytes to continue from (the default). When `false` (WYNetwork's
    /// and XZDownloadTask's plain downloads, for a server whose ranges cannot be trusted), nothing partial is kept:
    /// the bytes still arrive in `<destination>.part` and go into place whole, but no resume record is written, a
    /// retry, pause, restart or new process fetches the file again from the first byte, and a download that fails
    /// or pauses leaves no part file behind. It uses one connection, whatever ``connections`` says.
    public var resumable: Bool

    /// Creates options; see each property for its default.
    public init(
        checksum: DownloadChecksum? = nil,
        connections: Int = 1,
        minimumSegmentBytes: Int64 = 1 << 20,
        retries: Int = 5,
        retryDelay: Duration = .milliseconds(250),
        idleTimeout: Duration = .seconds(30),
        checkpointInterval: Duration = .milliseconds(500),
        bytesPerSecond: Int? = nil,
        overwrites: Bool = false,
        priority: RequestPriority = .normal,
        headers: HTTPFields = [:],
        key: String? = nil,
        tag: String? = nil,
        resumable: Bool = true
    ) {
        self.checksum = checksum
        self.connections = connections
        self.minimumSegmentBytes = minimumSegmentBytes
        self.retries = retries
        self.retryDelay = retryDelay
        self.idleTimeout = idleTimeout
        self.checkpointInterval = checkpointInterval
        self.bytesPerSecond = bytesPerSecond
        self.overwrites = overwrites
        self.priority = priority
        self.headers = headers
        self.key = key
        self.tag = tag
        self.resumable = resumable
    }

    /// The ``PooledRequest/userInfo`` key under which a download's requests carry its ``key``.
    public static let keyInfo = "courier.download.key"

    /// A request for `url` as every request of a download is made: the extra headers, the idle timeout, a total
    /// timeout of a year (silence, not length, is what ends a transfer), and `Accept-Encoding: identity` so the
    /// bytes arrive as the server stores them.
    func request(_ method: HTTPRequest.Method, _ url: URL) -> Request<Data> {
        var request = Request<Data>(method: method, path: url.absoluteString)
        for field in headers { request.headers.append(field) }
        request.timeouts = TimeoutOverrides(readIdle: idleTimeout, total: Timeouts.noLimit)
        // The transfer asks the download's own rule after each failed exchange, since only it can resume from
        // the byte it reached; the exchange itself is not retried (a stale connection is still sent again).
        request.retryPolicy = RetryPolicy(maxAttempts: 1)
        request.tag = tag
        if let key { request.userInfo[Self.keyInfo] = key }
        return request.header("Accept-Encoding", "identity")
    }
}

/// The files of one download: the destination, `<destination>.part` and its sidecar `<destination>.part.resume`.
struct DownloadFiles: Sendable, Hashable {
    let destination: URL

    /// `DEST.part` beside the destination; for a name too long to take `.part.resume` within 255 bytes, a short
    /// stand-in made from its hash (see ``FileNameLimit``), so every name the filesystem takes can be downloaded to.
    var part: URL { destination.deletingLastPathComponent().appendingPathComponent(sideBase + ".part") }
    /// `DEST.part.resume`, or the stand-in's.
    var record: URL { destination.deletingLastPathComponent().appendingPathComponent(sideBase + ".part.resume") }

    private var sideBase: String {
        FileNameLimit.base(for: destination.lastPathComponent, suffixBytes: ".part.resume".utf8.count)
    }

    /// Removes the part file and the record; missing files are fine.
    func discardPartial() {
        try? FileManager.default.removeItem(at: part)
        try? FileManager.default.removeItem(at: record)
    }

    /// Whether a finish of the download of `url` was cut short after the file went into place and before its
    /// record was removed (a crash in between): the destination is there with the record's whole length, the
    /// part file is gone or is a second name of the destination (a crash between the hard link that put it in
    /// place and the removal of the part's name), and the record says every byte was written.
    /// ``DownloadTransfer`` then only verifies the file and removes the part's name and the record.
    func showFinishedMove(for url: URL) -> Bool {
        guard !FileManager.default.fileExists(atPath: part.path) || partIsDestination,
            let record = loadRecord(for: url),
            let total = record.totalLength, record.writtenBytes == total,
            let size = FileManager.default.sizeOfItem(atPath: destination.path)
        else { return false }
        return size == total
    }

    /// Whether the part file and the destination are two names of one file (same device and inode).
    var partIsDestination: Bool {
        var partStatus = stat()
        var destinationStatus = stat()
        guard stat(part.path, &partStatus) == 0, stat(destination.path, &destinationStatus) == 0 else { return false }
        return partStatus.st_dev == destinationStatus.st_dev && partStatus.st_ino == destinationStatus.st_ino
    }

    /// The saved record, or `nil` when it is missing, damaged or for another URL.
    func loadRecord(for url: URL) -> ResumeRecord? {
        guard let data = try? Data(contentsOf: record), let record = ResumeRecord.decode(data),
            record.url == url.absoluteString
        else {
            return nil
        }
        return record
    }
}
