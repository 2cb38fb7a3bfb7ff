import HTTPTypes

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

/// Moves the bytes of one download from the server into place: the requests (one per segment), the resume
/// rules, the part file, the checkpoints, retries, verification and the final rename. A value run by the
/// ``Download`` actor's transfer task; cancelling that task pauses it with a checkpoint written.
struct DownloadTransfer: Sendable {
    let session: Session
    let url: URL
    let files: DownloadFiles
    let options: DownloadOptions
    let limits: [BandwidthLimit]
    let live: LiveRecord
    /// The crash tests' seam between the move into place and the record's removal.
    let afterMoveIntoPlace: (@Sendable (URL) -> Void)?
    /// Restarted and retrying events for the download's observers.
    let notify: @Sendable (DownloadEvent) -> Void

    /// A reason to throw the partial bytes away and fetch the file again from zero.
    struct RestartSignal: Error {
        let reason: String
        /// The server does not really serve ranges: go on with one connection.
        var dropsSegments = false
    }

    /// Runs until the file is in place (returning its URL), or throws. Whatever happens, the resume record on
    /// disk afterwards describes exactly the bytes in the part file.
    func run() async throws -> URL {
        let folder = files.destination.deletingLastPathComponent()
        do { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) } catch {
            throw CourierError(
                code: .fileAccess,
                message: "cannot create \(folder.path): \(SystemErrorText.describe(error))"
            )
        }
        if options.resumable, files.showFinishedMove(for: url) { return try settleFinishedMove() }
        // Locked for the life of the transfer: another one to the same destination stops here and touches nothing.
        let part = try PartFile(url: files.part)
        defer { part.close() }
        if options.resumable {
            try resumeOrStartFresh(part)
        } else {
            // Whatever an earlier run left goes, under the lock: this one starts from the first byte.
            try? FileManager.default.removeItem(at: files.record)
            try startOver(part)
        }
        do {
            try await fetchEverything(part)
            try checkpoint(part)
        } catch {
            guard options.resumable else { throw discardingPartial(error) }
            // A failure before the first byte (a 404, a refused connection) leaves nothing behind, a pause excepted.
            if live.snapshot().writtenBytes == 0, RequestExecutor.normalize(error).code != .cancelled {
                throw discardingPartial(error)
            }
            do { try checkpoint(part) } catch let recordError {
                throw Self.failure(error, recordNotSaved: recordError)
            }
            throw error
        }
        do { return try finish(part) } catch {
            throw options.resumable ? error : discardingPartial(error)
        }
    }

    /// `error`, after removing the part file of a download that keeps nothing partial; a whole file that only
    /// could not go into place (``CourierError/Code/destinationExists``, whose message points at it) stays.
    private func discardingPartial(_ error: any Error) -> any Error {
        if (error as? CourierError)?.code != .destinationExists { files.discardPartial() }
        return error
    }

    /// `error`, saying also that the resume record could not be saved: the part file may hold bytes the record
    /// does not claim, so the next attempt can resume from less (or start over). Its code stays `error`'s.
    static func failure(_ error: any Error, recordNotSaved recordError: any Error) -> CourierError {
        var failure = RequestExecutor.normalize(error)
        let reason = (recordError as? CourierError)?.message ?? "\(recordError)"
        failure.message +=
            "; its resume record could not be saved either (\(reason)), so the next attempt may resume from less"
        return failure
    }

    /// Loads the sidecar record when it belongs to this URL and fits the part file; otherwise starts from zero.
    private func resumeOrStartFresh(_ part: PartFile) throws {
        guard var record = files.loadRecord(for: url) else {
            try startOver(part)
            return
        }
        let size = try part.size()
        for index in record.segments.indices where record.segments[index].next > size {
            // never trust more than the file holds
            record.segments[index].written = max(0, size - record.segments[index].start)
        }
        live.replace(with: record)
        if record.writtenBytes > 0 { notify(.resumed(at: record.writtenBytes, of: record.totalLength)) }
    }

    /// Empties the part file and forgets every segment: the next byte written is the file's first.
    func startOver(_ part: PartFile) throws {
        try part.truncate(to: 0)
        live.replace(with: .fresh(url: url.absoluteString))
    }

    /// Fetches every missing segment, starting over from zero (at most three times) when the server's
    /// answers say the partial bytes cannot be used.
    private func fetchEverything(_ part: PartFile) async throws {
        var restarts = 0
        var segments = options.connections > 1 && options.resumable
        while true {
            do {
                if segments { try await planSegments() }
                try await fetchSegments(part)
                return
            } catch let restart as RestartSignal {
                restarts += 1
                guard restarts <= 3 else {
                    throw CourierError.rangeMismatch("the file kept changing on the server (\(restart.reason))")
                }
                if restart.dropsSegments { segments = false }
                try startOver(part)
                try checkpoint(part)
                notify(.restarted(reason: restart.reason))
            }
        }
    }

    /// With several connections and one segment left, asks for the length with `HEAD` and splits what is
    /// missing when the server accepts ranges and it is large enough: the whole file for a fresh download, the
    /// bytes after those on disk for a resumed one (whose first segment keeps them), when the file is still the
    /// one the record names.
    private func planSegments() async throws {
        let record = live.snapshot()
        guard record.segments.count == 1, !record.segments[0].isDone else { return }
        let resumedAt = record.segments[0].next  // 0 for a fresh download
        guard let head = try? await session.stream(options.request(.head, url)) else { return }
        // A HEAD's answer has no body: reading its end ends the exchange as read (dropped unread, the monitors,
        // the metrics and the span would hear a cancel) and leaves the connection for the segments.
        do { for try await _ in head.body {} } catch { return }
        let validator = EntityValidator(head.headers)
        guard head.status.code == 200,
            head.headers[.acceptRanges]?.lowercased().contains("bytes") == true,
            let length = head.headers[.contentLength].flatMap({ Int64($0) }), length > resumedAt,
            (length - resumedAt) / 2 >= options.minimumSegmentBytes
        else { return }
        if resumedAt > 0 {  // the bytes on disk must be of this file
            guard record.totalLength.map({ $0 == length }) ?? true, record.validator.ifRange != nil,
                validator.isSameVersion(as: record.validator)
            else { return }
        }
        var planned = record
        planned.validator = validator
        planned.totalLength = length
        planned.segments = ResumeRecord.segments(
            totalLength: length - resumedAt,
            connections: options.connections,
            minimumBytes: options.minimumSegmentBytes
        ).enumerated().map { index, piece in
            ResumeRecord.Segment(
                start: index == 0 ? 0 : resumedAt + piece.start,
                end: piece.end.map { resumedAt + $0 },
                written: index == 0 ? resumedAt : 0
            )
        }
        live.replace(with: planned)
    }

    /// Runs one task per unfinished segment next to the checkpointer.
    private func fetchSegments(_ part: PartFile) async throws {
        let segments = live.snapshot().segments
        let pending = segments.indices.filter { !segments[$0].isDone }
        guard !pending.isEmpty else { return }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                while true {
                    do { try await Task.sleep(for: options.checkpointInterval) } catch { return false }
                    try checkpoint(part)
                }
            }
            for index in pending {
                group.addTask {
                    try await fetchSegment(index, part)
                    return true
                }
            }
            var remaining = pending.count
            while remaining > 0, let isSegment = try await group.next() {
                if isSegment { remaining -= 1 }
            }
            group.cancelAll()
        }
    }

    /// Saves the record, after flushing the part file, so the record never claims a byte a crash could lose.
    /// A download that is not resumable keeps no record.
    private func checkpoint(_ part: PartFile) throws {
        guard options.resumable else { return }
        let snapshot = live.snapshot()
        try part.synchronize()
        do { try AtomicFile.write(snapshot.encoded(), to: files.record, durable: true) } catch let failure
            as AtomicFile.Failure
        {
            throw PartFile.error(errno: failure.code, failure.description)
        }
    }

    /// Checks the length and the checksum, then moves the part file into place and removes the record.
    private func finish(_ part: PartFile) throws -> URL {
        let record = live.snapshot()
        let written = record.writtenBytes
        guard let total = record.totalLength, written == total else {
            throw CourierError(
                code: .integrity,
                message: "the download has \(written) of \(record.totalLength.map(String.init) ?? "?") bytes"
            )
        }
        if try part.size() != total { try part.truncate(to: total) }
        try part.synchronize()
        if let checksum = options.checksum {
            guard part.isFile(at: files.part) else { throw Self.replacedPart(files.part) }
            do { try checksum.verify(files.part) } catch var mismatch as CourierError where mismatch.code == .integrity
            {
                // Fetching the same bytes again would fail the same way: the next run starts from the first byte.
                files.discardPartial()
                mismatch.message += "; the download was discarded, so the next run fetches it again"
                throw mismatch
            }
        }
        try moveIntoPlace()
        // What went into place must be the file that was written and verified, not one put under its name since.
        guard part.isFile(at: files.destination) else { throw Self.replacedPart(files.destination) }
        afterMoveIntoPlace?(files.destination)
        try? FileManager.default.removeItem(at: files.record)  // a crash before this is settled by the next run
        return files.destination
    }

    /// The error for a part file whose name no longer leads to the file this transfer wrote.
    private static func replacedPart(_ url: URL) -> CourierError {
        CourierError(
            code: .integrity,
            message: "\(url.path) is no longer the file this download wrote; nothing was reported as saved"
        )
    }

    /// Ends a finish that a crash cut short between the move into place and the record's removal (see
    /// ``DownloadFiles/showFinishedMove(for:)``): verifies the file in place when there is a checksum, then
    /// removes the part's name when it is still a second name of the file, and the record.
    private func settleFinishedMove() throws -> URL {
        try options.checksum?.verify(files.destination)
        if files.partIsDestination { unlink(files.part.path) }
        try? FileManager.default.removeItem(at: files.record)
        return files.destination
    }

    /// Renames the part file to the destination; without ``DownloadOptions/overwrites`` a hard link makes the
    /// step fail instead of replacing a file that appeared meanwhile. When the destination cannot take it (a file
    /// that appeared, a folder, a directory that refuses), the whole file stays where it is, and the error names
    /// it (``CourierError/partialFile``): RBEFireworks' fallback path.
    private func moveIntoPlace() throws {
        let part = files.part.path
        let destination = files.destination.path
        var failure: CourierError?
        if options.overwrites {
            if rename(part, destination) != 0 {
                failure = PartFile.failure("cannot move into place", files.destination)
            }
        } else if link(part, destination) == 0 {
            unlink(part)
        } else if errno == EEXIST {
            failure = CourierError(code: .destinationExists, message: "\(destination) already exists")
        } else {
            failure = PartFile.failure("cannot move into place", files.destination)
        }
        if var failure {
            failure.partialFile = files.part
            failure.message += "; the whole download is kept in \(part)"
            throw failure
        }
        let directory = open(files.destination.deletingLastPathComponent().path, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)  // make the rename itself durable
            close(directory)
        }
    }
}
