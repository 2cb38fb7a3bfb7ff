/// What a ``DownloadManager`` does to the downloads a selection names, and how it hands out its slots.
extension DownloadManager {
    // MARK: Operations

    /// Queues the selected downloads (idle, paused or failed ones); returns how many were queued.
    @discardableResult
    public func start(_ selection: DownloadSelection) async throws -> Int {
        try await apply(selection, .start) { download in
            try await download.start()
            queue.enqueue(download.id, priority: download.options.priority)
        }
    }

    /// The same as ``start(_:)``: queues paused or failed downloads, which continue from their partial files.
    @discardableResult
    public func resume(_ selection: DownloadSelection) async throws -> Int { try await start(selection) }

    /// Pauses the selected downloads, keeping their partial files and records; returns how many were paused.
    @discardableResult
    public func pause(_ selection: DownloadSelection) async throws -> Int {
        try await apply(selection, .pause) { download in
            queue.removeWaiting(download.id)
            try await download.pause()
        }
    }

    /// Cancels the selected downloads and removes their partial files; returns how many were cancelled.
    @discardableResult
    public func cancel(_ selection: DownloadSelection) async throws -> Int {
        try await apply(selection, .cancel) { download in
            queue.removeWaiting(download.id)
            try await download.cancel()
        }
    }

    /// Throws the partial files of the selected downloads away and queues them again from zero.
    @discardableResult
    public func restart(_ selection: DownloadSelection) async throws -> Int {
        try await apply(selection, .restart) { download in
            queue.removeWaiting(download.id)
            try await download.restart()
            queue.enqueue(download.id, priority: download.options.priority)
        }
    }

    private func apply(
        _ selection: DownloadSelection,
        _ event: DownloadStateMachine.Event,
        _ operation: (Download) async throws -> Void
    ) async throws -> Int {
        let targets: [Download]
        switch selection {
        case .download(let download):
            try await operation(download)
            pump()
            return 1
        case .downloads(let list): targets = list
        case .url(let url): targets = downloads(for: url)
        case .key(let key): targets = download(key: key).map { [$0] } ?? []
        case .all: targets = downloads
        }
        var count = 0
        for download in targets where await download.allows(event) {
            do {
                try await operation(download)
                count += 1
            } catch let error as CourierError where error.code == .invalidState {
                continue  // its state changed between the check and the operation
            }
        }
        pump()
        return count
    }

    // MARK: Scheduling

    func slotFreed(_ id: DownloadID) {
        queue.slotFreed(id)
        pump()
    }

    /// Gives free slots to waiting downloads.
    func pump() {
        while let id = queue.next() {
            guard let download = byID[id] else {
                queue.slotFreed(id)
                continue
            }
            Task {
                if !(await download.grantSlot()) { self.slotFreed(id) }
            }
        }
    }
}
