#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// One download: its state machine, its transfer and its events. Downloads are made and driven by a
/// ``DownloadManager``; a handle is for watching (``events()``, ``completion()``) and for naming it in the
/// manager's operations.
///
/// ```swift
/// let download = try await manager.add(url, to: .directory(downloads))
/// for await event in await download.events() { print(event) }
/// ```
public actor Download {
    /// The identifier, derived from the destination.
    public nonisolated let id: DownloadID
    /// Where the bytes come from.
    public nonisolated let url: URL
    /// Where the finished file goes.
    public nonisolated let destination: URL
    /// How it runs.
    public nonisolated let options: DownloadOptions

    private let session: Session
    private let files: DownloadFiles
    private let limits: [BandwidthLimit]
    private let live: LiveRecord
    private let broadcaster = EventBroadcaster<DownloadEvent>(replaysLatest: false, bufferLimit: 64)
    private let hooks: DownloadHooks
    private var machine: DownloadStateMachine
    private var transfer: Task<Void, Never>?
    private var generation = 0
    private var meter = RateMeter()
    private var rate: Double = 0
    private var outcome: DownloadEvent?
    /// Why the download may not run again, when its restored record cannot be trusted (a stored checksum that no
    /// longer reads): it stays failed with this error until it is cancelled.
    private let refusal: CourierError?

    /// A download in `state`; with a `refusal`, a failed one that refuses to start (see ``refusal``).
    init(
        url: URL,
        destination: URL,
        options: DownloadOptions,
        state: DownloadState,
        session: Session,
        managerLimit: BandwidthLimit?,
        hooks: DownloadHooks,
        refusal: CourierError? = nil
    ) {
        self.id = DownloadID(destination: destination)
        self.url = url
        self.destination = destination
        self.options = options
        self.session = session
        self.files = DownloadFiles(destination: destination)
        self.limits = [options.bytesPerSecond.map(BandwidthLimit.init), managerLimit].compactMap { $0 }
        self.live = LiveRecord(files.loadRecord(for: url) ?? .fresh(url: url.absoluteString))
        self.hooks = hooks
        self.machine = DownloadStateMachine(state: refusal == nil ? state : .failed)
        self.refusal = refusal
        self.outcome = refusal.map { .failed($0) }
    }

    /// The current state.
    public var state: DownloadState { machine.state }

    /// How far it has come.
    public var progress: DownloadProgress {
        let (written, total) = live.counts()
        return DownloadProgress(
            completedBytes: written,
            totalBytes: total,
            bytesPerSecond: machine.state == .running ? rate : 0
        )
    }

    /// The error that stopped it, when it failed.
    public var error: CourierError? {
        if case .failed(let error) = outcome { return error }
        return nil
    }

    /// Its events from now until it completes, fails or is cancelled. The first events are the current state
    /// and progress (and the outcome, for a download that has already ended, whose stream then ends at once).
    public func events() -> AsyncStream<DownloadEvent> {
        var initial: [DownloadEvent] = [.state(machine.state), .progress(progress)]
        guard machine.state.isFinal else { return broadcaster.subscribe(startingWith: initial) }
        if let outcome { initial.append(outcome) }
        return AsyncStream { continuation in
            for event in initial { continuation.yield(event) }
            continuation.finish()
        }
    }

    /// Waits until the download has ended and returns the file, or throws why it did not: its error when it
    /// failed, ``CourierError/Code/cancelled`` when cancelled. A paused download is waited for until it ends.
    public func completion() async throws -> URL {
        for await event in events() {
            switch event {
            case .completed(let url): return url
            case .failed(let error): throw error
            case .state(.cancelled): throw CourierError.cancelled("the download was cancelled")
            default: continue
            }
        }
        throw CourierError.cancelled("the download was cancelled")
    }

    // MARK: Operations (the manager calls these)

    /// Queues it (start, or resume after a pause or failure). Throws ``CourierError/Code/invalidState`` when
    /// it is not idle, paused or failed.
    func start() async throws {
        if let refusal { throw refusal }
        try require(.start, "start")
        await handle(.start)
    }

    /// Starts the transfer if the download still waits for a slot; `false` when it no longer does (it was
    /// paused or cancelled meanwhile).
    func grantSlot() async -> Bool {
        guard machine.canHandle(.slotGranted) else { return false }
        await handle(.slotGranted)
        return true
    }

    /// Pauses it, keeping the partial file; a running transfer writes its resume record first.
    func pause() async throws {
        try require(.pause, "pause")
        await handle(.pause)
    }

    /// Cancels it and removes the partial file and its record.
    func cancel() async throws {
        try require(.cancel, "cancel")
        await handle(.cancel)
    }

    /// Throws the partial file away and queues it again from zero.
    func restart() async throws {
        try require(.restart, "restart")
        await handle(.restart)
    }

    /// Feeds `event` to the state machine and does what it answers: the one place the download's state changes.
    /// `outcome` is what a finished or failed transfer brought, for the observers.
    private func handle(_ event: DownloadStateMachine.Event, outcome ended: DownloadEvent? = nil) async {
        switch machine.handle(event) {
        case .enqueue:  // the manager queues it once this returns
            outcome = nil
            report()
        case .beginTransfer:
            report()
            beginTransfer()
        case .stopTransfer:
            report()
            await stopTransfer()
            broadcaster.yield(.progress(progress))
        case .stopAndDiscard:
            await stopTransfer()
            discardPartial()
            finish(with: .state(.cancelled))
        case .discardAndEnqueue:
            await stopTransfer()
            discardPartial()
            outcome = nil
            meter.reset(from: 0)
            report()
        case .report:
            if let ended {
                if case .completed = ended { broadcaster.yield(.progress(progress)) }
                finish(with: ended)
            } else {  // paused while it waited for a slot
                report()
                broadcaster.yield(.progress(progress))
            }
        }
    }

    /// `error`, saying where the partial file is kept when the failure left one.
    private func keepingPartial(_ error: CourierError) -> CourierError {
        guard error.partialFile == nil, FileManager.default.fileExists(atPath: files.part.path(percentEncoded: false))
        else { return error }
        var error = error
        error.partialFile = files.part
        error.message += "; the partial download is kept in \(files.part.path(percentEncoded: false))"
        return error
    }

    /// Deletes the partial file and its record; the download starts again from its first byte.
    private func discardPartial() {
        files.discardPartial()
        live.replace(with: .fresh(url: url.absoluteString))
    }

    /// Whether `event` applies now.
    func allows(_ event: DownloadStateMachine.Event) -> Bool { machine.canHandle(event) }

    // MARK: Transfer

    private func beginTransfer() {
        generation += 1
        let generation = generation
        meter.reset(from: live.counts().written)
        // The transfer's events (restarts, retries) reach observers in the order it reported them, all before its end.
        let events = OrderedRelay<DownloadEvent>()
        let transfer = DownloadTransfer(
            session: session,
            url: url,
            files: files,
            options: options,
            limits: limits,
            live: live,
            afterMoveIntoPlace: hooks.afterMoveIntoPlace
        ) { event in
            events.yield(event)
        }
        self.transfer = Task {
            async let relayed: Void = events.run { await self.relay($0, generation: generation) }
            let result = await withTaskGroup(of: Result<URL, CourierError>?.self) { group in
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: .milliseconds(100))
                        await self.sampleProgress(generation: generation)
                    }
                    return nil
                }
                group.addTask {
                    do { return .success(try await transfer.run()) } catch {
                        return .failure(RequestExecutor.normalize(error))
                    }
                }
                var result: Result<URL, CourierError>?
                while let next = await group.next() {
                    if let next {
                        result = next
                        group.cancelAll()
                    }
                }
                return result ?? .failure(.cancelled())
            }
            events.finish()
            await relayed
            await self.transferEnded(result, generation: generation)
        }
    }

    /// Cancels the running transfer and waits until it has stopped (and saved its record).
    private func stopTransfer() async {
        guard let transfer else { return }
        self.transfer = nil
        transfer.cancel()
        await transfer.value
    }

    private func transferEnded(_ result: Result<URL, CourierError>, generation: Int) async {
        // A pause, cancel or restart has already moved the state on and handles the transfer's end itself.
        if generation == self.generation, machine.state == .running {
            transfer = nil
            switch result {
            case .success(let file): await handle(.finished, outcome: .completed(file))
            case .failure(let error): await handle(.failed, outcome: .failed(keepingPartial(error)))
            }
        }
        await hooks.slotFreed(id)
    }

    private func relay(_ event: DownloadEvent, generation: Int) {
        guard generation == self.generation, machine.state == .running else { return }
        if case .restarted = event { meter.reset(from: 0) }
        broadcaster.yield(event)
    }

    private func sampleProgress(generation: Int) {
        guard generation == self.generation, machine.state == .running else { return }
        rate = meter.record(live.counts().written)
        broadcaster.yield(.progress(progress))
    }

    // MARK: Reporting

    /// Tells observers and the state directory about the current state.
    private func report() {
        broadcaster.yield(.state(machine.state))
        hooks.stateChanged(registryEntry(state: machine.state))
    }

    /// Reports a final state with its outcome and ends the current subscriptions.
    private func finish(with event: DownloadEvent) {
        outcome = event
        report()
        if case .state = event {} else { broadcaster.yield(event) }
        broadcaster.endSubscriptions()
    }

    private func require(_ event: DownloadStateMachine.Event, _ verb: String) throws {
        guard machine.canHandle(event) else {
            throw CourierError(
                code: .invalidState,
                message: "cannot \(verb) the download of \(destination.lastPathComponent): it is \(machine.state)"
            )
        }
    }

    nonisolated func registryEntry(state: DownloadState) -> DownloadRegistry.Entry {
        DownloadRegistry.Entry(
            url: url.absoluteString,
            destination: destination.path,
            state: state,
            checksum: options.checksum?.description,
            connections: options.connections,
            retries: options.retries,
            bytesPerSecond: options.bytesPerSecond,
            overwrites: options.overwrites,
            priority: options.priority.rawValue,
            key: options.key,
            tag: options.tag,
            resumable: options.resumable ? nil : false
        )
    }
}

/// What a download tells its manager.
struct DownloadHooks: Sendable {
    /// The download's transfer has ended, so its slot is free.
    let slotFreed: @Sendable (DownloadID) async -> Void
    /// The state changed; the manager saves it in the state directory.
    let stateChanged: @Sendable (DownloadRegistry.Entry) -> Void
    /// ``DownloadManager/Configuration/afterMoveIntoPlace``.
    var afterMoveIntoPlace: (@Sendable (URL) -> Void)?
}
