import HTTPTypes

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Runs downloads: a queue with a limit on how many run at once, priorities, operations on one, a list or all
/// of them, aggregate progress, and (with a state directory) persistence across process restarts.
///
/// ```swift
/// try await withSession { session in
///     let manager = try DownloadManager(session: session, configuration: .init(stateDirectory: state))
///     _ = await manager.restore()                       // picks up what a killed process left
///     let download = try await manager.add(url, to: .file(target), options: .init(checksum: .sha256(hex)))
///     let file = try await download.completion()
/// }
/// ```
public actor DownloadManager {
    /// Settings of the whole manager.
    public struct Configuration: Sendable {
        /// How many downloads run at once; the rest wait.
        public var maxConcurrentDownloads: Int
        /// Where the manager keeps its list of downloads, so a new process can ``DownloadManager/restore(resuming:)``
        /// them; `nil` keeps the list in memory (each download still has its sidecar resume record).
        public var stateDirectory: URL?
        /// A limit on the rate of all downloads together, in bytes per second.
        public var bytesPerSecond: Int?
        /// Called in the window between a finished download's move into place and the removal of its resume
        /// record, with the destination: the crash tests' helper sleeps there to be killed in that window.
        @_spi(CrashTesting) public var afterMoveIntoPlace: (@Sendable (URL) -> Void)?

        /// Creates a configuration.
        public init(maxConcurrentDownloads: Int = 3, stateDirectory: URL? = nil, bytesPerSecond: Int? = nil) {
            self.maxConcurrentDownloads = maxConcurrentDownloads
            self.stateDirectory = stateDirectory
            self.bytesPerSecond = bytesPerSecond
        }
    }

    private let session: Session
    private let afterMoveIntoPlace: (@Sendable (URL) -> Void)?
    private let registry: DownloadRegistry?
    private let limit: BandwidthLimit?
    private var order: [DownloadID] = []
    // Internal, not private: the operations and the scheduling (DownloadManager+Operations.swift) use them.
    var byID: [DownloadID: Download] = [:]
    var queue: DownloadScheduler

    /// Creates a manager that sends its requests through `session` (which it does not shut down).
    public init(session: Session, configuration: Configuration = Configuration()) throws {
        self.session = session
        self.afterMoveIntoPlace = configuration.afterMoveIntoPlace
        self.registry = try configuration.stateDirectory.map(DownloadRegistry.init(directory:))
        self.limit = configuration.bytesPerSecond.map(BandwidthLimit.init)
        self.queue = DownloadScheduler(limit: configuration.maxConcurrentDownloads)
    }

    // MARK: Listing

    /// Every download, in the order they were added.
    public var downloads: [Download] { order.compactMap { byID[$0] } }

    /// The downloads of `url`.
    public func downloads(for url: URL) -> [Download] { downloads.filter { $0.url == url } }

    /// The download added with `key` as its ``DownloadOptions/key``.
    public func download(key: String) -> Download? { downloads.first { $0.options.key == key } }

    /// The downloads waiting for a slot, in the order they will start.
    public var waiting: [Download] { queue.waitingInOrder.compactMap { byID[$0] } }

    /// How many downloads hold a slot now.
    public var runningCount: Int { queue.running.count }

    // MARK: Adding

    /// Adds a download of `url` and, unless `startsImmediately` is `false`, queues it. Adding a destination the
    /// manager already has returns that download, resumed when it was paused or failed (so running the same
    /// command twice resumes instead of duplicating) and fetched again when it was cancelled or completed.
    ///
    /// Throws ``CourierError/Code/destinationExists`` when the file is already there and
    /// ``DownloadOptions/overwrites`` is off, and ``CourierError/Code/invalidParameter`` for impossible options.
    ///
    /// `path` may be relative: it is resolved against the session's base URL (and API version) the way a
    /// request's path is, so `manager.add("/files/report.pdf", to: …)` downloads from the configured server.
    public func add(
        _ path: String,
        to destination: DownloadDestination,
        options: DownloadOptions = DownloadOptions(),
        startsImmediately: Bool = true
    ) async throws -> Download {
        let url = try URLBuilder.resolve(
            path: path,
            bases: URLBuilder.Bases(),
            configuration: session.currentConfiguration
        )
        return try await add(url, to: destination, options: options, startsImmediately: startsImmediately)
    }

    /// Adds a download of `url` (an absolute http or https URL; the form taking a `String` also takes a path).
    ///
    /// Throws ``CourierError/Code/destinationExists`` when the file is already there and
    /// ``DownloadOptions/overwrites`` is off, and ``CourierError/Code/invalidParameter`` for impossible options.
    public func add(
        _ url: URL,
        to destination: DownloadDestination,
        options: DownloadOptions = DownloadOptions(),
        startsImmediately: Bool = true
    ) async throws -> Download {
        guard (1...64).contains(options.connections), options.retries >= 0, options.minimumSegmentBytes > 0,
            (options.bytesPerSecond ?? 1) > 0
        else {
            throw CourierError(
                code: .invalidParameter,
                message: "connections must be 1…64, retries ≥ 0, rates and segment sizes > 0"
            )
        }
        try URLBuilder.validate(url)
        var file = try await resolve(destination, for: url, options: options)
        if case .directory = destination { file = distinctName(file, for: url) }
        if let key = options.key, let holder = download(key: key), holder.id != DownloadID(destination: file) {
            throw CourierError(
                code: .invalidParameter,
                message: "the key \"\(key)\" already names the download to \(holder.destination.path)"
            )
        }
        // A file that a crash left in place with its record still beside it is this download's own: the run settles it.
        if !options.overwrites, FileManager.default.fileExists(atPath: file.path),
            !DownloadFiles(destination: file).showFinishedMove(for: url)
        {
            throw CourierError(
                code: .destinationExists,
                message: "\(file.path) already exists and overwriting was not asked for"
            )
        }
        if case .file = destination { try await claim(file, for: url) }
        if let existing = byID[DownloadID(destination: file)] {
            guard startsImmediately else { return existing }
            if await existing.allows(.start) {
                try await start(.download(existing))
            } else if await existing.state.isFinal {
                // completed (its file since removed or to be replaced) or cancelled
                try await restart(.download(existing))
            }
            return existing
        }
        let download = make(url: url, destination: file, options: options, state: .idle)
        registry?.save(download.registryEntry(state: .idle))
        if startsImmediately { try await start(.download(download)) }
        return download
    }

    private func make(
        url: URL,
        destination: URL,
        options: DownloadOptions,
        state: DownloadState,
        refusal: CourierError? = nil
    ) -> Download {
        let registry = registry
        let hooks = DownloadHooks(
            slotFreed: { [weak self] id in await self?.slotFreed(id) },
            stateChanged: { entry in registry?.save(entry) },
            afterMoveIntoPlace: afterMoveIntoPlace
        )
        let download = Download(
            url: url,
            destination: destination,
            options: options,
            state: state,
            session: session,
            managerLimit: limit,
            hooks: hooks,
            refusal: refusal
        )
        byID[download.id] = download
        order.append(download.id)
        return download
    }

    /// `file`, unless another download of this manager already goes there for another URL: then, the name being
    /// the server's or the URL's, the first free `name (1).ext`, `name (2).ext`, … as browsers do. Two URLs never
    /// share a file, so each reported download is bytes of its own.
    private func distinctName(_ file: URL, for url: URL) -> URL {
        func isTaken(_ candidate: URL) -> Bool {
            byID[DownloadID(destination: candidate)].map { $0.url != url } ?? false
        }
        guard isTaken(file) else { return file }
        let folder = file.deletingLastPathComponent()
        let ext = file.pathExtension
        let stem = ext.isEmpty ? file.lastPathComponent : String(file.lastPathComponent.dropLast(ext.count + 1))
        for number in 1... {
            let candidate = folder.appending(path: "\(stem) (\(number))" + (ext.isEmpty ? "" : "." + ext))
                .standardizedFileURL
            if !isTaken(candidate), !FileManager.default.fileExists(atPath: candidate.path) { return candidate }
        }
        return file  // not reached: some number is always free
    }

    /// Makes `file`, which the caller named, the destination of `url` alone: a finished download of another URL to
    /// it is forgotten (its file is replaced or refused by the usual rules); one still running or waiting makes
    /// this a ``CourierError/Code/destinationBusy``.
    private func claim(_ file: URL, for url: URL) async throws {
        let id = DownloadID(destination: file)
        guard let other = byID[id], other.url != url else { return }
        guard await other.state.isFinal else {
            throw CourierError(
                code: .destinationBusy,
                message: "\(file.path) is already the destination of \(Redactor.standard.redact(url: other.url))"
            )
        }
        if byID[id] === other {  // re-read after the await: another call may have replaced it meanwhile
            byID[id] = nil
            order.removeAll { $0 == id }
        }
    }

    /// The file a destination names; for a directory, the name the server suggests in a `HEAD` answer's
    /// `Content-Disposition`, else the URL's.
    private func resolve(_ destination: DownloadDestination, for url: URL, options: DownloadOptions) async throws -> URL
    {
        switch destination {
        case .file(let file):
            return file.standardizedFileURL
        case .directory(let directory):
            let disposition = try? await session.stream(options.request(.head, url)).headers[.contentDisposition]
            return try DownloadFileName.destination(
                for: DownloadFileName.suggested(contentDisposition: disposition, url: url),
                in: directory
            )
        }
    }

    /// Adds the unfinished downloads saved in the state directory (by a process that was stopped or killed)
    /// and, with `resuming`, starts again those that were running or waiting; paused, idle and failed ones
    /// keep their state. Returns the downloads it added.
    @discardableResult
    public func restore(resuming: Bool = true) async -> [Download] {
        guard let registry else { return [] }
        var restored: [Download] = []
        for entry in registry.entries() {
            guard let url = URL(string: entry.url),
                byID[DownloadID(destination: URL(filePath: entry.destination))] == nil
            else { continue }
            var options = DownloadOptions(
                connections: entry.connections,
                retries: entry.retries,
                bytesPerSecond: entry.bytesPerSecond,
                overwrites: entry.overwrites,
                priority: RequestPriority(rawValue: entry.priority) ?? .normal,
                key: entry.key,
                tag: entry.tag,
                resumable: entry.resumable ?? true
            )
            var refusal: CourierError?
            if let checksum = entry.checksum {
                do { options.checksum = try DownloadChecksum(stored: checksum) } catch {
                    // Never resumed unchecked: it comes back failed, and stays so until it is cancelled and added again.
                    let reason = (error as? CourierError)?.message ?? "\(error)"
                    refusal = CourierError(
                        code: .invalidParameter,
                        message: "the stored checksum of \(entry.destination) cannot be read (\(reason)), "
                            + "so its bytes could not be verified: cancel it and add it again with its checksum"
                    )
                }
            }
            let wasActive = refusal == nil && (entry.state == .running || entry.state == .waiting)
            let download = make(
                url: url,
                destination: URL(filePath: entry.destination),
                options: options,
                state: wasActive ? .idle : entry.state,
                refusal: refusal
            )
            restored.append(download)
            if resuming, wasActive { _ = try? await start(.download(download)) }
        }
        return restored
    }

    // MARK: Progress

    /// The progress of every download together; the total is known when every total is.
    public func progress() async -> DownloadProgress {
        var sum = DownloadProgress(completedBytes: 0, totalBytes: 0, bytesPerSecond: 0)
        for download in downloads {
            let one = await download.progress
            sum.completedBytes += one.completedBytes
            sum.bytesPerSecond += one.bytesPerSecond
            sum.totalBytes = sum.totalBytes.flatMap { total in one.totalBytes.map { total + $0 } }
        }
        return sum
    }

    /// The aggregate ``progress()`` every `interval`, for as long as the stream is read.
    public nonisolated func progressUpdates(
        every interval: Duration = .milliseconds(100)
    ) -> AsyncStream<DownloadProgress> {
        AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task { [weak self] in
                while !Task.isCancelled, let self {
                    continuation.yield(await self.progress())
                    try? await Task.sleep(for: interval)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
