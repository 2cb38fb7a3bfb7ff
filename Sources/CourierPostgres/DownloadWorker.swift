public import Courier
import HTTPTypes
public import ServiceLifecycle

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A worker of a ``DownloadQueue``: claims jobs, downloads each with a ``/Courier/DownloadManager`` (resuming from a
/// `.part` file another worker left), renews its lease while it does, and records the outcome once.
///
/// ```swift
/// let queue = DownloadQueue(database: try FleetDatabase(url: "postgres://app:secret@db.internal/app"))
/// let worker = try DownloadWorker(queue: queue, session: session, concurrency: 4)
/// await worker.run(untilSettled: true)   // or run(), as a service, until graceful shutdown or stop()
/// ```
///
/// - **Exactly once.** A job's file goes into place once (a rename, after its checksum is verified), and the
///   job is marked completed once, by the worker that holds it. A file already at the destination when a job
///   is claimed was put there by a worker that died before it could say so: it is verified (with a checksum) and
///   the job completed, not downloaded again.
/// - **Leases.** A worker renews each lease every third of ``lease``. A renewal that finds the job taken by
///   another worker stops the download; a database that stays away for most of a lease makes the worker pause
///   the download and hand the job back in its mind (its part file stays), so two workers never write one file.
/// - **Failures.** A transient error (the connection, a 5xx) queues the job again until it has had its
///   attempts; a permanent one (a 404, a checksum that does not match, a file that cannot be written) fails it
///   at once, with its typed error. A database that is down makes the worker wait and go on.
public actor DownloadWorker {
    /// What a worker did, for a command line or a log.
    public enum Event: Sendable {
        /// It took a job.
        case started(DownloadJob)
        /// The job's file is in place.
        case completed(DownloadJob, URL)
        /// The attempt failed; `willRetry` when the job went back to the queue.
        case failed(DownloadJob, CourierError, willRetry: Bool)
        /// It gave the job back (``stop()``) or lost its lease; the part file stays for the next worker.
        case handedBack(DownloadJob)
        /// The database did not answer; the worker waits and tries again.
        case waitingForDatabase(CourierError)
    }

    /// The worker's name in the queue's `worker` column: host, process and a random suffix.
    public nonisolated let name: String
    /// The queue it works on.
    public nonisolated let queue: DownloadQueue
    /// How many jobs it downloads at once.
    public nonisolated let concurrency: Int
    /// How long a claim holds without renewal.
    public nonisolated let lease: Duration
    /// How long it waits before asking again when there is nothing to claim or the database is away.
    public nonisolated let pollInterval: Duration

    private let manager: DownloadManager
    private let retries: Int
    private let idleTimeout: Duration
    private let broadcaster = EventBroadcaster<Event>(replaysLatest: false)
    private var isStopping = false
    /// One per running job, finished by ``stop()``: each job's watch ends on its own.
    private var stopSignals: [Int64: AsyncStream<Void>.Continuation] = [:]
    /// The jobs its slots work on, from claim to end: a renewal late past the lease (a loaded machine) leaves such
    /// a job claimable, and another slot of this worker must not claim it a second time.
    private var held: Set<Int64> = []
    /// Its slots claim one at a time: a claim sent while another is on its way would not yet know the job that
    /// one returns, and could claim it again once its lease runs out.
    private var isClaiming = false
    private var waitingToClaim: [CheckedContinuation<Void, Never>] = []

    /// A worker on `queue` that downloads through `session`; each job's download retries `retries` transient
    /// failures in a row from the byte reached and ends on `idleTimeout` of silence (see ``/Courier/DownloadOptions``).
    public init(
        queue: DownloadQueue,
        session: Session,
        concurrency: Int = 2,
        lease: Duration = .seconds(30),
        pollInterval: Duration = .milliseconds(500),
        bytesPerSecond: Int? = nil,
        retries: Int = 2,
        idleTimeout: Duration = .seconds(30)
    ) throws {
        self.queue = queue
        self.retries = max(0, retries)
        self.idleTimeout = idleTimeout
        self.concurrency = max(1, concurrency)
        self.lease = max(lease, .seconds(1))
        self.pollInterval = pollInterval
        name =
            "\(ProcessInfo.processInfo.hostName):\(ProcessInfo.processInfo.processIdentifier):\(UUID().uuidString.prefix(8).lowercased())"
        manager = try DownloadManager(
            session: session,
            configuration: .init(
                maxConcurrentDownloads: max(1, concurrency),
                bytesPerSecond: bytesPerSecond
            )
        )
    }

    /// Its events from now on; the stream ends when ``run(untilSettled:)`` returns.
    public nonisolated func events() -> AsyncStream<Event> {
        broadcaster.subscribe()
    }

    /// Claims and downloads jobs until ``stop()``, graceful shutdown (inside a `ServiceGroup`) or cancellation, each
    /// of which stops it the same way; with `untilSettled`, also returns once no job is queued or running anywhere.
    public func run(untilSettled: Bool) async {
        await withGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<concurrency { group.addTask { await self.slot(untilSettled: untilSettled) } }
                await withTaskCancellationHandler {
                    await group.waitForAll()
                } onCancel: {
                    Task { await self.stop() }
                }
            }
        } onGracefulShutdown: {
            Task { await self.stop() }
        }
        broadcaster.endSubscriptions()
    }

    /// Stops claiming, pauses what runs (the part files stay) and hands those jobs back to the queue without
    /// counting the attempt; ``run(untilSettled:)`` returns once they are handed back.
    public func stop() async {
        isStopping = true
        for signal in stopSignals.values { signal.finish() }
    }

    // MARK: One slot

    private func slot(untilSettled: Bool) async {
        while !isStopping {
            let claimed: DownloadJob?
            do {
                claimed = try await claimNext()
            } catch {
                tell(.waitingForDatabase(CourierError.normalized(error)))
                try? await Task.sleep(for: pollInterval)
                continue
            }
            guard let job = claimed else {
                if untilSettled, let status = try? await queue.status(), status.isSettled { return }
                try? await Task.sleep(for: pollInterval)
                continue
            }
            await work(on: job)
            held.remove(job.id)
        }
    }

    /// Claims a job other than the ones this worker holds, after any claim already on its way has returned and
    /// its job is held.
    private func claimNext() async throws -> DownloadJob? {
        while isClaiming { await withCheckedContinuation { waitingToClaim.append($0) } }
        isClaiming = true
        defer {
            isClaiming = false
            if !waitingToClaim.isEmpty { waitingToClaim.removeFirst().resume() }
        }
        let job = try await queue.claim(for: name, lease: lease, except: held)
        if let job { held.insert(job.id) }
        return job
    }

    private func work(on job: DownloadJob) async {
        tell(.started(job))
        if FileManager.default.fileExists(atPath: job.destination.path(percentEncoded: false)) {
            return await settleExisting(job)
        }
        let download: Download
        do {
            download = try await manager.add(
                job.url,
                to: .file(job.destination),
                options: DownloadOptions(
                    checksum: job.checksum,
                    connections: job.connections,
                    retries: retries,
                    idleTimeout: idleTimeout
                )
            )
        } catch {
            return await failed(job, CourierError.normalized(error))
        }
        let outcome = await watch(download, of: job)
        switch outcome {
        case .completed(let file):
            await completed(job, file: file)
        case .failed(let error):
            await failed(job, error)
        case .stopped:
            _ = try? await manager.pause(.download(download))
            _ = try? await queue.handBack(job.id, for: name)
            tell(.handedBack(job))
        case .lost:
            _ = try? await manager.pause(.download(download))
            tell(.handedBack(job))
        }
    }

    private enum Outcome: Sendable {
        case completed(URL)
        case failed(CourierError)
        /// The worker stops (or the database stayed away for most of the lease).
        case stopped
        /// Another worker holds the job now.
        case lost
    }

    /// Waits for `download` to end while renewing the job's lease.
    private func watch(_ download: Download, of job: DownloadJob) async -> Outcome {
        let queue = queue
        let name = name
        let lease = lease
        let (stopping, signal) = AsyncStream<Void>.makeStream()
        if isStopping { signal.finish() } else { stopSignals[job.id] = signal }
        defer { stopSignals[job.id] = nil }
        return await withTaskGroup(of: Outcome?.self) { group in
            group.addTask {
                for await _ in stopping {}
                return Task.isCancelled ? nil : .stopped
            }
            group.addTask {
                do { return .completed(try await download.completion()) } catch {
                    return Task.isCancelled ? nil : .failed(CourierError.normalized(error))
                }
            }
            group.addTask {
                var lastRenewal = ContinuousClock.now
                while !Task.isCancelled {
                    try? await Task.sleep(for: lease / 3)
                    guard !Task.isCancelled else { return nil }
                    do {
                        guard try await queue.renew(job.id, for: name, lease: lease, progress: await download.progress)
                        else { return .lost }
                        lastRenewal = .now
                    } catch {
                        self.tell(.waitingForDatabase(CourierError.normalized(error)))
                        // Before the lease can run out, stop writing: another worker may claim the job then.
                        if ContinuousClock.now - lastRenewal > lease * 2 / 3 { return .stopped }
                    }
                }
                return nil
            }
            var outcome: Outcome = .stopped
            for await result in group {
                guard let result else { continue }
                outcome = result
                break
            }
            group.cancelAll()
            return outcome
        }
    }

    /// A file at the destination when the job was claimed: a worker moved it there and died before recording
    /// it. Verified against the checksum when there is one, and the job completed.
    private func settleExisting(_ job: DownloadJob) async {
        do {
            try job.checksum?.verify(job.destination)
            await completed(job, file: job.destination)
        } catch {
            let reason = CourierError.normalized(error).message
            let message = "\(job.destination.path) already exists and does not match the job's checksum: \(reason)"
            await failed(job, CourierError(code: .destinationExists, message: message, underlying: error))
        }
    }

    /// Records the completion, trying again while the database is away (the file is in place either way, and a
    /// worker that claims the job later finds it there).
    private func completed(_ job: DownloadJob, file: URL) async {
        let size =
            FileManager.default.sizeOfItem(atPath: file.path(percentEncoded: false)) ?? 0
        while true {
            do {
                _ = try await queue.complete(job.id, for: name, bytes: size)
                tell(.completed(job, file))
                return
            } catch {
                tell(.waitingForDatabase(CourierError.normalized(error)))
                if isStopping { return }
                try? await Task.sleep(for: pollInterval)
            }
        }
    }

    private func failed(_ job: DownloadJob, _ error: CourierError) async {
        let permanent = error.isPermanentForDownloads
        _ = try? await queue.release(job.id, for: name, error: error, permanent: permanent)
        tell(.failed(job, error, willRetry: !permanent && job.attempts < job.maxAttempts))
    }

    private nonisolated func tell(_ event: Event) {
        broadcaster.yield(event)
    }
}

extension DownloadWorker: Service {
    /// Claims and downloads jobs until graceful shutdown, then ``stop()``s: the jobs it runs are paused (their part
    /// files stay) and handed back to the queue without counting the attempt, and it returns once they are.
    /// Cancellation stops it the same way, at once. List the worker after its ``FleetDatabase`` and its session in a
    /// `ServiceGroup`, which shuts services down last to first.
    public nonisolated func run() async throws {
        await run(untilSettled: false)
    }
}
